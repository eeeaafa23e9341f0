// fleetmem web UI: progressive enhancement over server-rendered pages. Every form also works
// without this script; with it, fact actions happen in place, the list loads behind skeleton
// rows, and the keyboard affordances of seed 003 §6.10 work.
(function () {
  "use strict";

  const csrf = (document.querySelector('meta[name="csrf-token"]') || {}).content || "";
  const $ = (sel, root) => (root || document).querySelector(sel);
  const $$ = (sel, root) => Array.from((root || document).querySelectorAll(sel));
  const SKELETON_ROWS = 6;

  // ---- the workspace switcher: choosing one switches at once (the button does without JS) -
  $$("[data-workspace-switcher]").forEach((form) => {
    const select = $("select", form);
    const button = $("[data-switch-button]", form);
    if (!select) return;
    if (button) button.hidden = true;
    select.addEventListener("change", () => form.requestSubmit());
  });

  // ---- helpers ----------------------------------------------------------------------------
  async function post(form, extra) {
    const body = new URLSearchParams(new FormData(form));
    if (extra) for (const [k, v] of Object.entries(extra)) body.set(k, v);
    // getAttribute: a field named "action" would shadow form.action.
    const res = await fetch(form.getAttribute("action"), {
      method: "POST",
      body,
      headers: { Accept: "application/json", "X-CSRF-Token": csrf },
      credentials: "same-origin",
    });
    let data = {};
    try { data = await res.json(); } catch (e) { data = {}; }
    if (!res.ok) {
      // The summary is written for a person (no internal key=value context); older
      // daemons send only the message.
      const said = data.error && (data.error.summary || data.error.message);
      const err = new Error(said || res.statusText);
      err.status = res.status;
      err.data = data;
      throw err;
    }
    return data;
  }

  async function copyText(text) {
    try {
      await navigator.clipboard.writeText(text);
      return true;
    } catch (e) {
      const area = document.createElement("textarea");
      area.value = text;
      area.setAttribute("readonly", "");
      area.className = "visually-hidden";
      document.body.appendChild(area);
      area.select();
      let ok = false;
      try { ok = document.execCommand("copy"); } catch (e2) { ok = false; }
      area.remove();
      return ok;
    }
  }

  function toast(text, opts) {
    const region = $("#toasts");
    if (!region) return null;
    const el = document.createElement("div");
    el.className = "toast";
    el.setAttribute("data-toast", "");
    const span = document.createElement("span");
    span.textContent = text;
    el.appendChild(span);
    if (opts && opts.action) {
      const btn = document.createElement("button");
      btn.type = "button";
      btn.className = "btn small";
      btn.textContent = opts.action;
      btn.addEventListener("click", () => { el.remove(); opts.onAction(); });
      el.appendChild(btn);
    }
    region.replaceChildren(el);
    const seconds = (opts && opts.seconds) || 5;
    setTimeout(() => el.remove(), seconds * 1000);
    return el;
  }

  function isTyping(target) {
    if (!target) return false;
    const tag = target.tagName;
    return tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT" || target.isContentEditable;
  }

  // ---- dialogs: focus stays inside, Esc cancels, focus returns to the trigger ------------
  function openDialog(dialog, trigger) {
    dialog._trigger = trigger || document.activeElement;
    dialog.showModal();
    const first = $("input, button, select, textarea", dialog);
    if (first) first.focus();
  }
  function closeDialog(dialog) {
    if (dialog.open) dialog.close();
  }
  $$("dialog").forEach((dialog) => {
    dialog.addEventListener("close", () => {
      const t = dialog._trigger;
      if (t && typeof t.focus === "function") t.focus();
    });
    dialog.addEventListener("keydown", (ev) => {
      if (ev.key !== "Tab") return;
      const items = $$("input, button:not([disabled]), select, textarea, a[href]", dialog)
        .filter((el) => !el.hidden && el.offsetParent !== null);
      if (!items.length) return;
      const first = items[0], last = items[items.length - 1];
      if (ev.shiftKey && document.activeElement === first) { ev.preventDefault(); last.focus(); }
      else if (!ev.shiftKey && document.activeElement === last) { ev.preventDefault(); first.focus(); }
    });
    $$("[data-close-dialog]", dialog).forEach((b) => b.addEventListener("click", () => closeDialog(dialog)));
  });

  // ---- copy buttons -----------------------------------------------------------------------
  document.addEventListener("click", async (ev) => {
    const btn = ev.target.closest("[data-copy]");
    if (!btn) return;
    ev.preventDefault();
    const ok = await copyText(btn.getAttribute("data-copy"));
    toast(ok ? "Copied." : "Could not copy: select the text and copy it yourself.");
    const menu = btn.closest("details.menu");
    if (menu) menu.open = false;
  });

  // ---- confirmations for plain forms ------------------------------------------------------
  $$("form[data-confirm]").forEach((form) => {
    form.addEventListener("submit", (ev) => {
      if (!window.confirm(form.getAttribute("data-confirm"))) ev.preventDefault();
    });
  });

  // ---- global keys: "/" and g-then-f/c/a -------------------------------------------------
  let pendingG = 0;
  document.addEventListener("keydown", (ev) => {
    if (ev.defaultPrevented || ev.ctrlKey || ev.metaKey || ev.altKey) return;
    if (isTyping(ev.target) || $("dialog[open]")) return;
    if (ev.key === "/") {
      const box = $("#q");
      if (box) { ev.preventDefault(); box.focus(); box.select(); }
      else { ev.preventDefault(); location.href = "/memory/facts?focus=search"; }
      return;
    }
    if (ev.key === "g") { pendingG = Date.now(); return; }
    if (pendingG && Date.now() - pendingG < 1500) {
      const target = { f: "/memory/facts", c: "/memory/files", a: "/memory/agents" }[ev.key];
      pendingG = 0;
      if (target) { ev.preventDefault(); location.href = target; }
    }
  });

  // =========================================================================================
  // Facts
  // =========================================================================================
  const listBox = $("#facts-list");
  if (listBox) initFacts(listBox);

  function initFacts(box) {
    const search = $("#q");
    let seq = 0;
    let current = $(".list-root", box);

    function selfUrl() {
      const root = $(".list-root", box);
      return (root && root.getAttribute("data-self")) || "/memory/facts";
    }

    // The placeholder keeps the list's own title above its rows (the title of the list it
    // replaces, the same height), so the first fact lands where the first grey row stood.
    function skeleton() {
      const wrap = document.createElement("div");
      wrap.setAttribute("aria-hidden", "true");
      wrap.setAttribute("data-skeleton", "");
      const title = document.createElement("h2");
      title.className = "skeleton-title"; // styled as .list-title, never found as one
      const shown = current && $(".list-title", current);
      title.textContent = (shown && shown.textContent) || "\u00a0";
      wrap.appendChild(title);
      const ol = document.createElement("ol");
      ol.className = "skeleton";
      for (let i = 0; i < SKELETON_ROWS; i++) {
        const li = document.createElement("li");
        li.appendChild(document.createElement("span"));
        li.appendChild(document.createElement("span"));
        ol.appendChild(li);
      }
      wrap.appendChild(ol);
      return wrap;
    }

    function updateRail(root, view) {
      let counts = {};
      try { counts = JSON.parse(root.getAttribute("data-counts") || "{}"); } catch (e) { counts = {}; }
      $$("[data-count]").forEach((el) => {
        const key = el.getAttribute("data-count");
        if (key in counts) el.textContent = Number(counts[key]).toLocaleString("en-US");
      });
      if (view) {
        $$("[data-facts-nav]").forEach((a) => {
          if (a.getAttribute("data-facts-nav") === view) a.setAttribute("aria-current", "page");
          else a.removeAttribute("aria-current");
        });
      }
    }

    // Load the list for ``url`` (a /memory/facts URL) into the page.
    async function load(url, opts) {
      opts = opts || {};
      const mine = ++seq;
      const target = new URL(url, location.origin);
      const fragment = new URL("/memory/facts/_list", location.origin);
      fragment.search = target.search;
      if (!opts.quiet && !opts.append) {
        box.setAttribute("aria-busy", "true");
        box.replaceChildren(skeleton());
      }
      let html;
      try {
        const res = await fetch(fragment, { headers: { Accept: "text/html" }, credentials: "same-origin" });
        if (res.status === 401 || res.redirected) { location.href = "/login"; return; }
        html = await res.text();
        if (!res.ok) throw new Error(res.statusText);
      } catch (e) {
        if (mine === seq) {
          box.setAttribute("aria-busy", "false");
          box.innerHTML = '<p class="notice bad" role="alert">Could not load the facts. <a href="' + target.pathname + target.search + '">Retry</a></p>';
        }
        return;
      }
      if (mine !== seq) return; // a newer request won
      const holder = document.createElement("div");
      holder.innerHTML = html;
      const root = $(".list-root", holder);
      if (opts.append && current) {
        const list = $(".fact-list", current);
        const more = $$(".fact-list > li", root);
        if (list) more.forEach((li) => list.appendChild(li));
        const foot = $(".list-foot", current), newFoot = $(".list-foot", root);
        if (foot && newFoot) {
          foot.replaceWith(newFoot);
          const shown = $("[data-shown]", newFoot);
          if (shown) shown.textContent = $$(".fact-list > li", current).length.toLocaleString("en-US");
        }
        if (more[0]) more[0].focus();
      } else {
        // A row focused now keeps the focus in the new list: a quiet reload (after a
        // forget) lands while the person is already moving through the rows, and a key
        // pressed on a row that was replaced would go nowhere.
        const active = document.activeElement;
        const held = active && active.classList && active.classList.contains("fact") && box.contains(active)
          ? active.getAttribute("data-id") : null;
        box.replaceChildren(root);
        current = root;
        if (held && !opts.focusId) opts.focusId = held;
      }
      box.setAttribute("aria-busy", "false");
      updateRail(root, root.getAttribute("data-view"));
      if (opts.push) history.pushState({ facts: true }, "", target.pathname + target.search);
      // Typing that happened while the list was loading is applied now.
      if (search && !opts.append) {
        const typed = search.value.trim();
        if (typed !== (root.getAttribute("data-query") || "")) scheduleSearch(0);
      }
      if (opts.focusId) {
        const row = document.getElementById("fact-" + opts.focusId);
        if (row) row.focus();
      }
    }

    function viewParam() {
      const root = $(".list-root", box);
      return (root && root.getAttribute("data-view")) || "all";
    }

    // Searching: typing is debounced; the last request wins.
    let timer = 0;
    function scheduleSearch(delay) {
      clearTimeout(timer);
      timer = setTimeout(() => {
        const q = search.value.trim();
        const view = viewParam();
        const params = new URLSearchParams();
        if (view !== "all") params.set("view", view);
        if (q) params.set("q", q);
        const qs = params.toString();
        load("/memory/facts" + (qs ? "?" + qs : ""), { push: true, replace: true });
      }, delay);
    }
    const searchForm = $("[data-facts-search]");
    if (searchForm && search) {
      searchForm.addEventListener("submit", (ev) => { ev.preventDefault(); scheduleSearch(0); });
      search.addEventListener("input", () => {
        if (box.getAttribute("aria-busy") === "true") return; // applied when the list lands
        scheduleSearch(300);
      });
      search.addEventListener("keydown", (ev) => {
        if (ev.key === "Escape" && search.value) { search.value = ""; scheduleSearch(0); }
        if (ev.key === "ArrowDown") {
          const row = $(".fact", box);
          if (row) { ev.preventDefault(); row.focus(); }
        }
      });
    }

    // Rail filters load in place.
    $$("[data-facts-nav]").forEach((a) => {
      a.addEventListener("click", (ev) => {
        if (ev.ctrlKey || ev.metaKey || ev.shiftKey) return;
        ev.preventDefault();
        if (search) search.value = "";
        $$("[data-facts-nav]").forEach((x) => x.removeAttribute("aria-current"));
        a.setAttribute("aria-current", "page");
        load(a.getAttribute("href"), { push: true });
      });
    });
    window.addEventListener("popstate", () => {
      if (location.pathname === "/memory/facts" || location.pathname === "/memory") {
        const params = new URLSearchParams(location.search);
        if (search) search.value = params.get("q") || "";
        load(location.pathname + location.search, {});
      }
    });

    // Clicks inside the list: load more, clear search, add from query, edit.
    box.addEventListener("click", (ev) => {
      const more = ev.target.closest("[data-load-more]");
      if (more) { ev.preventDefault(); load(more.getAttribute("href"), { append: true }); return; }
      const clear = ev.target.closest("[data-clear-search]");
      if (clear) { ev.preventDefault(); if (search) search.value = ""; load(clear.getAttribute("href"), { push: true }); return; }
      const addq = ev.target.closest("[data-add-from-query]");
      if (addq) { ev.preventDefault(); openAdd(addq.getAttribute("data-add-from-query")); return; }
      const openA = ev.target.closest("[data-open-add]");
      if (openA) { ev.preventDefault(); openAdd(""); return; }
      const edit = ev.target.closest("[data-edit]");
      if (edit) { ev.preventDefault(); startEdit(edit.closest(".fact")); return; }
      const cancel = ev.target.closest("[data-cancel-edit]");
      if (cancel) { ev.preventDefault(); cancelEdit(cancel.closest(".fact")); }
    });
    const clearTop = $(".search [data-clear-search]");
    if (clearTop) clearTop.addEventListener("click", (ev) => { ev.preventDefault(); search.value = ""; load(clearTop.getAttribute("href"), { push: true }); clearTop.remove(); });

    // Editing in place.
    function startEdit(row) {
      if (!row) return;
      const form = $(".fact-edit", row), body = $(".fact-body", row);
      if (!form) return;
      body.hidden = true;
      form.hidden = false;
      const area = $("textarea", form);
      area.focus();
      area.setSelectionRange(area.value.length, area.value.length);
    }
    function cancelEdit(row) {
      if (!row) return;
      const form = $(".fact-edit", row), body = $(".fact-body", row);
      const area = $("textarea", form);
      area.value = area.getAttribute("data-original");
      form.hidden = true;
      body.hidden = false;
      const err = $(".fact-note", row);
      if (err) err.textContent = "";
      row.focus();
    }
    async function saveEdit(form) {
      const row = form.closest(".fact");
      const note = $(".fact-note", row);
      try {
        const data = await post(form);
        const body = $(".fact-body", row), area = $("textarea", form);
        body.textContent = data.fact.body;
        area.value = data.fact.body;
        area.setAttribute("data-original", data.fact.body);
        form.hidden = true;
        body.hidden = false;
        note.textContent = data.in_flight_line || "";
        toast(data.changed ? "Saved. Runs started from now on use the new wording." : "Nothing changed.");
        row.focus();
      } catch (err) {
        note.textContent = err.message;
      }
    }
    box.addEventListener("submit", (ev) => {
      const form = ev.target;
      if (form.classList.contains("fact-edit")) { ev.preventDefault(); saveEdit(form); return; }
      const action = form.getAttribute("data-fact-action");
      if (!action) return;
      ev.preventDefault();
      factAction(form, action);
    });
    box.addEventListener("keydown", (ev) => {
      const area = ev.target.closest(".fact-edit textarea");
      if (!area) return;
      if (ev.key === "Escape") { ev.preventDefault(); ev.stopPropagation(); cancelEdit(area.closest(".fact")); }
      if (ev.key === "Enter" && (ev.ctrlKey || ev.metaKey)) { ev.preventDefault(); saveEdit(area.closest("form")); }
    });

    // Forget (with undo), restore, pin, review.
    async function factAction(form, action) {
      const row = form.closest(".fact");
      const id = row && row.getAttribute("data-id");
      const menu = form.closest("details.menu");
      if (menu) menu.open = false;
      try {
        const data = await post(form);
        if (action === "forget") {
          const next = row.nextElementSibling || row.previousElementSibling;
          row.remove();
          if (next && next.classList.contains("fact")) next.focus();
          toast(data.toast, { action: "Undo", seconds: data.seconds, onAction: () => undo(id) });
          load(selfUrl(), { quiet: true });
        } else {
          const message = {
            restore: "Restored. Agents can use it again from their next run.",
            pin: data.fact && data.fact.pinned ? "Pinned: it goes into every run, ahead of recalled facts." : "Unpinned.",
            review: "Review recorded: " + (data.fact ? data.fact.status : "") + ".",
          }[action];
          toast(message);
          await load(selfUrl(), { quiet: true, focusId: id });
        }
      } catch (err) {
        const note = row && $(".fact-note", row);
        if (note) note.textContent = err.message;
        else toast(err.message);
      }
    }
    async function undo(id) {
      const form = document.createElement("form");
      form.setAttribute("action", "/memory/facts/" + encodeURIComponent(id) + "/restore");
      try {
        await post(form);
        toast("Restored.");
        await load(selfUrl(), { quiet: true, focusId: id });
      } catch (err) {
        toast(err.message);
      }
    }
    // An undo toast rendered by the server (after a plain form post).
    $$("#toasts [data-toast]").forEach((el) => {
      const seconds = Number(el.getAttribute("data-seconds") || "10");
      setTimeout(() => el.remove(), seconds * 1000);
      const form = $("form[data-undo]", el);
      if (form) form.addEventListener("submit", async (ev) => {
        ev.preventDefault();
        try { await post(form); el.remove(); toast("Restored."); load(selfUrl(), { quiet: true }); }
        catch (err) { toast(err.message); }
      });
    });

    // Row focus and the list's keys.
    box.addEventListener("keydown", (ev) => {
      const row = ev.target.closest(".fact");
      if (!row || ev.target !== row || ev.ctrlKey || ev.metaKey || ev.altKey) return;
      if (pendingG && Date.now() - pendingG < 1500) return; // "g f" jumps, it never forgets
      const rows = $$(".fact", box);
      const i = rows.indexOf(row);
      if (ev.key === "ArrowDown" && i < rows.length - 1) { ev.preventDefault(); rows[i + 1].focus(); }
      else if (ev.key === "ArrowUp") { ev.preventDefault(); if (i > 0) rows[i - 1].focus(); else if (search) search.focus(); }
      else if (ev.key === "Enter") { ev.preventDefault(); location.href = "/memory/facts/" + row.getAttribute("data-id") + "?edit=1"; }
      else if (ev.key === "e") { ev.preventDefault(); startEdit(row); }
      else if (ev.key === "f") {
        const form = $('form[data-fact-action="forget"]', row);
        if (form) { ev.preventDefault(); factAction(form, "forget"); }
      } else if (ev.key === "p") {
        const form = $('form[data-fact-action="pin"]', row);
        if (form) { ev.preventDefault(); factAction(form, "pin"); }
      }
    });

    // Adding a fact.
    const addForm = $("#add-fact");
    function openAdd(text) {
      if (!addForm) return;
      addForm.hidden = false;
      const area = $("textarea", addForm);
      if (text) area.value = text;
      countChars();
      area.focus();
      area.setSelectionRange(area.value.length, area.value.length);
    }
    function countChars() {
      const out = $("[data-chars]", addForm);
      if (out) out.textContent = String($("textarea", addForm).value.trim().length);
    }
    $$("[data-open-add]").forEach((a) => a.addEventListener("click", (ev) => { ev.preventDefault(); openAdd(""); }));
    if (addForm) {
      $("textarea", addForm).addEventListener("input", countChars);
      countChars();
      const close = $("[data-close-add]", addForm);
      if (close) close.addEventListener("click", (ev) => { ev.preventDefault(); addForm.hidden = true; });
      addForm.addEventListener("submit", async (ev) => {
        ev.preventDefault();
        const err = $("[data-form-error]", addForm);
        err.textContent = "";
        try {
          const data = await post(addForm);
          $("textarea", addForm).value = "";
          countChars();
          addForm.hidden = true;
          if (search) search.value = "";
          const near = (data.near_duplicates || [])[0];
          toast(near ? "Remembered. It is close to: “" + near.body + "”." : "Remembered. Every run started from now on can use it.");
          await load("/memory/facts", { push: viewParam() !== "all", focusId: data.fact.id });
        } catch (e) {
          err.textContent = e.message;
        }
      });
      addForm.addEventListener("keydown", (ev) => {
        if (ev.key === "Enter" && (ev.ctrlKey || ev.metaKey)) { ev.preventDefault(); addForm.requestSubmit(); }
        if (ev.key === "Escape") { ev.preventDefault(); addForm.hidden = true; }
      });
    }

    // Forget all.
    const dialog = $("#forget-all-dialog");
    if (dialog) {
      const input = $("#fa-confirm", dialog), go = $("[data-confirm-forget-all]", dialog);
      const phrase = input.getAttribute("data-phrase");
      input.addEventListener("input", () => { go.disabled = input.value !== phrase; });
      $$("[data-open-forget-all]").forEach((a) => a.addEventListener("click", (ev) => {
        ev.preventDefault();
        input.value = "";
        go.disabled = true;
        $("[data-form-error]", dialog).textContent = "";
        openDialog(dialog, a);
      }));
      $("form", dialog).addEventListener("submit", async (ev) => {
        ev.preventDefault();
        if (input.value !== phrase) return;
        try {
          await post(ev.target);
          dialog._trigger = null;
          closeDialog(dialog);
          location.href = "/memory/facts?done=forgot_all";
        } catch (err) {
          $("[data-form-error]", dialog).textContent = err.message;
        }
      });
    }

    // A row to focus after a plain form post (?focus=...), or the search box (?focus=search).
    const focus = new URLSearchParams(location.search).get("focus");
    if (focus === "search" && search) search.focus();
    else if (focus) { const row = document.getElementById("fact-" + focus); if (row) row.focus(); }
    else if (new URLSearchParams(location.search).get("edit")) {
      const row = document.getElementById("fact-" + new URLSearchParams(location.search).get("edit"));
      if (row) { const a = $("textarea", row); if (a) a.focus(); }
    }
    if (new URLSearchParams(location.search).get("add") === "1") openAdd(new URLSearchParams(location.search).get("body") || "");
  }

  // The fact page: edit in place with the same keys.
  const single = $(".fact-list.single");
  if (single) {
    single.addEventListener("click", (ev) => {
      const edit = ev.target.closest("[data-edit]");
      if (!edit) return;
      ev.preventDefault();
      const row = edit.closest(".fact");
      $(".fact-body", row).hidden = true;
      $(".fact-edit", row).hidden = false;
      $("textarea", row).focus();
    });
    single.addEventListener("keydown", (ev) => {
      const area = ev.target.closest(".fact-edit textarea");
      if (!area) return;
      if (ev.key === "Escape") {
        ev.preventDefault();
        const row = area.closest(".fact");
        area.value = area.getAttribute("data-original");
        $(".fact-edit", row).hidden = true;
        $(".fact-body", row).hidden = false;
      }
      if (ev.key === "Enter" && (ev.ctrlKey || ev.metaKey)) { ev.preventDefault(); area.form.requestSubmit(); }
    });
    const area = $(".fact-edit:not([hidden]) textarea", single);
    if (area) { area.focus(); area.setSelectionRange(area.value.length, area.value.length); }
  }

  // =========================================================================================
  // Context-file editor
  // =========================================================================================
  const editor = $("[data-editor]");
  if (editor) initEditor(editor);

  function initEditor(ed) {
    const write = $("#write-pane"), preview = $("#preview-pane");
    const text = $("#file-text"), form = $("#file-form");
    const tabs = { write: $("#tab-write"), preview: $("#tab-preview") };
    const panel = $("#ask-panel"), wrap = $(".editor-wrap");

    function show(which) {
      write.hidden = which !== "write";
      preview.hidden = which !== "preview";
      tabs.write.setAttribute("aria-selected", String(which === "write"));
      tabs.preview.setAttribute("aria-selected", String(which === "preview"));
      if (which === "write") text.focus();
    }
    Object.entries(tabs).forEach(([name, tab]) => tab.addEventListener("click", (ev) => { ev.preventDefault(); show(name); }));

    const unsaved = $("[data-unsaved]");
    const dirty = () => text.value !== text.getAttribute("data-saved");
    text.addEventListener("input", () => { if (unsaved) unsaved.hidden = !dirty(); });

    function skippedBlocks() { return $$(".skipped-block", preview); }
    function jump(step) {
      const blocks = skippedBlocks();
      if (!blocks.length) return;
      const at = blocks.indexOf(document.activeElement);
      const next = at < 0 ? (step > 0 ? 0 : blocks.length - 1) : (at + step + blocks.length) % blocks.length;
      blocks[next].focus();
      blocks[next].scrollIntoView({ block: "center" });
    }
    const showSkipped = $("[data-show-skipped]");
    if (showSkipped) showSkipped.addEventListener("click", (ev) => { ev.preventDefault(); show("preview"); jump(1); });

    function openAsk() {
      panel.hidden = false;
      wrap.classList.add("with-chat");
      const msg = $("[data-ask-message]", panel);
      msg.focus();
      msg.setSelectionRange(msg.value.length, msg.value.length);
    }
    function closeAsk() { panel.hidden = true; wrap.classList.remove("with-chat"); }
    $$("[data-open-ask]").forEach((b) => b.addEventListener("click", (ev) => { ev.preventDefault(); openAsk(); }));
    const closer = $("[data-close-ask]", panel);
    if (closer) closer.addEventListener("click", (ev) => { ev.preventDefault(); closeAsk(); });
    const chip = $("[data-chip]", panel), chipBody = $("#chip-body");
    chip.addEventListener("click", () => {
      const open = chip.getAttribute("aria-expanded") !== "true";
      chip.setAttribute("aria-expanded", String(open));
      chipBody.hidden = !open;
    });
    const copyAsk = $("[data-copy-ask]", panel);
    copyAsk.addEventListener("click", async () => {
      const msg = $("[data-ask-message]", panel).value;
      const sent = $("[data-sent]", panel).textContent;
      const title = $("[data-chip-title]", chip).textContent;
      const ok = await copyText(msg + "\n\n" + title + ":\n" + sent);
      $("[data-copied]", panel).textContent = ok ? "Copied: paste it into the agent's chat." : "Could not copy.";
    });
    const picker = $("[data-agent-picker]", panel);
    if (picker) {
      const submit = $("[data-picker-submit]", picker);
      if (submit) submit.hidden = true;
      $("select", picker).addEventListener("change", () => picker.submit());
    }

    // The concurrent-edit banner.
    const compare = $("[data-compare]");
    if (compare) compare.addEventListener("click", (ev) => {
      ev.preventDefault();
      const box = $("#compare");
      box.classList.add("open");
      box.scrollIntoView({ block: "start" });
    });
    const reload = $("form[data-reload]");
    if (reload) reload.addEventListener("submit", () => { $('input[name="text"]', reload).value = text.value; });
    const keep = $("[data-keep]");
    if (keep) {
      keep.hidden = false;
      keep.addEventListener("click", async () => {
        const ok = await copyText(text.value);
        toast(ok ? "Your text is on the clipboard. Nothing was written." : "Could not copy.");
      });
    }

    document.addEventListener("keydown", (ev) => {
      const mod = ev.ctrlKey || ev.metaKey;
      if (mod && !ev.shiftKey && ev.key.toLowerCase() === "s") { ev.preventDefault(); form.requestSubmit(); return; }
      if (mod && ev.shiftKey && ev.key.toLowerCase() === "p") { ev.preventDefault(); show(preview.hidden ? "preview" : "write"); return; }
      if (mod && ev.shiftKey && ev.key.toLowerCase() === "a") { ev.preventDefault(); openAsk(); return; }
      if (!mod && !ev.altKey && !isTyping(ev.target) && !preview.hidden) {
        if (ev.key === "n") { ev.preventDefault(); jump(1); }
        if (ev.key === "N") { ev.preventDefault(); jump(-1); }
      }
    });
    if (!preview.hidden && location.hash === "#skipped") jump(1);
  }
})();
