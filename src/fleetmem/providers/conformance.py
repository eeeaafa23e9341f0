"""The provider conformance suite (seed 000 REQ-4): seven checks, each pass, warn or fail.

1. ``memory_contract`` answers a supported version (fail).
2. Each tool's ``inputSchema`` accepts fleetmem's canonical requests (fail).
3. Recording a synthetic episode in ``project:conformance.invalid/fleetmem/check-<nonce>``
   returns 1 to 32 ids (fail).
4. Recalling the nonce returns a recorded id (fail), within ``provider_timeout`` (warn).
5. Recalling it under another synthetic scope does not return the ids (warn: the provider
   does not filter by scope; fleetmem's index does).
6. After ``memory_forget`` on each id, recall returns none of them (warn: the provider does
   not forget; fleetmem tombstones).
7. Every response validates against its schema (fail).

A check that cannot run because an earlier one failed is ``skip``. Synthetic episodes never
enter fleetmem's index, and every id recorded is forgotten before the suite returns,
including on failure.
"""

from __future__ import annotations

import hashlib
import secrets
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Final, Literal

from fleetmem.core.episode import Episode, render_text
from fleetmem.errors import ProviderError
from fleetmem.providers import contract
from fleetmem.providers.session import SupervisedSession, ToolAnswer, ToolInfo

Outcome = Literal["pass", "warn", "fail", "skip"]

SYNTHETIC_HOST: Final = "conformance.invalid"
NAMES: Final = {
    1: "contract",
    2: "input schemas",
    3: "record",
    4: "recall",
    5: "scope",
    6: "forget",
    7: "response schemas",
}


@dataclass(frozen=True, slots=True)
class CheckResult:
    number: int
    name: str
    outcome: Outcome
    detail: str


@dataclass(frozen=True, slots=True)
class ConformanceReport:
    provider: str
    transport: str
    contract: int | None
    implementation: Mapping[str, Any] | None
    checks: tuple[CheckResult, ...]
    recorded: int
    forgotten: int
    cleanup_failed: int

    @property
    def passed(self) -> bool:
        """No check failed (warnings allowed)."""
        return all(c.outcome != "fail" for c in self.checks)

    def as_dict(self) -> dict[str, Any]:
        return {
            "provider": self.provider,
            "transport": self.transport,
            "contract": self.contract,
            "implementation": dict(self.implementation) if self.implementation else None,
            "passed": self.passed,
            "checks": [
                {"number": c.number, "name": c.name, "outcome": c.outcome, "detail": c.detail}
                for c in self.checks
            ],
            "cleanup": {
                "recorded": self.recorded,
                "forgotten": self.forgotten,
                "failed": self.cleanup_failed,
            },
        }


def synthetic_scope(kind: str, nonce: str) -> str:
    return f"project:{SYNTHETIC_HOST}/fleetmem/{kind}-{nonce}"


def synthetic_episode(nonce: str, now: datetime) -> Episode:
    """A valid episode that names the nonce, in the suite's own scope; never stored for real."""
    repo = f"{SYNTHETIC_HOST}/fleetmem/check-{nonce}"
    return Episode(
        episode_id="ep_" + hashlib.sha256(nonce.encode()).hexdigest()[:20],
        agent="fleetmem-conformance",
        adapter="conformance",
        run_id=f"conformance-{nonce}",
        trace_id=None,
        model=None,
        repo=repo,
        branch=None,
        outcome="succeeded",
        reason="completed",
        started_at=now.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        duration_ms=0,
        cost_usd=None,
        cost_source="unknown",
        files_touched=("conformance/check.txt",),
        pull_request=None,
        verify_failures=(),
        result_excerpt=(
            f"Synthetic conformance episode {nonce}: fleetmem checks that this provider"
            " records, recalls and forgets it."
        ),
        summary=None,
        trust_class="standard",
        scope=f"project:{repo}",
    )


@dataclass
class _Run:
    session: SupervisedSession
    call_timeout: float
    results: dict[int, CheckResult] = field(default_factory=dict)
    schema_problems: list[str] = field(default_factory=list)
    recorded: list[str] = field(default_factory=list)
    forgotten: set[str] = field(default_factory=set)
    cleanup_failed: int = 0

    def set(self, number: int, outcome: Outcome, detail: str) -> None:
        self.results.setdefault(number, CheckResult(number, NAMES[number], outcome, detail))

    def call(self, tool: str, args: Mapping[str, Any]) -> tuple[Mapping[str, Any], float]:
        """Call, validate (noting problems for check 7), return (data, seconds)."""
        started = time.perf_counter()
        answer: ToolAnswer = self.session.call(tool, args, self.call_timeout)
        elapsed = time.perf_counter() - started
        if answer.is_error:
            reason = contract.error_text(answer.texts) or "no message"
            raise contract.ContractViolation(tool, f"the tool answered with an error: {reason}")
        try:
            payload = contract.payload_of(
                tool, is_error=False, structured=answer.structured, texts=answer.texts
            )
            checked = contract.check_response(tool, payload)
        except contract.ContractViolation as exc:
            self.schema_problems.append(f"{tool}: {exc.reason}")
            raise
        self.schema_problems.extend(f"{tool}: {p}" for p in checked.problems)
        return checked.data, elapsed

    def recall_ids(self, query: str, scope: str) -> tuple[list[str], float]:
        data, elapsed = self.call("memory_recall", contract.recall_request(query, [scope], 20, []))
        ids = [str(i.get("id")) for i in data.get("items") or () if isinstance(i, dict)]
        return ids, elapsed


def canonical_requests(nonce: str, episode: Episode) -> dict[str, list[dict[str, Any]]]:
    """The requests fleetmem sends, by tool: what check 2 validates each inputSchema with."""
    scope = episode.scope
    other = synthetic_scope("other", nonce)
    return {
        "memory_contract": [{}],
        "memory_record_episode": [
            contract.record_request(
                episode.episode_id,
                scope,
                episode.trust_class,
                episode.to_dict(),
                render_text(episode),
            )
        ],
        "memory_recall": [
            contract.recall_request(nonce, [scope], 8, []),
            contract.recall_request(
                "why does the settlement fixture fail", [scope, other], 20, ["src/ledger.py"]
            ),
        ],
        "memory_forget": [contract.forget_request("conformance-unknown-id")],
    }


def _input_problems(info: ToolInfo, requests: Sequence[Mapping[str, Any]]) -> list[str]:
    from jsonschema.exceptions import SchemaError
    from jsonschema.validators import validator_for

    schema = dict(info.input_schema)
    try:
        cls = validator_for(schema)
        cls.check_schema(schema)
    except SchemaError as exc:
        return [f"{info.name}: its inputSchema is not a valid JSON Schema ({exc.validator})"]
    validator = cls(schema)
    problems = []
    for request in requests:
        for error in validator.iter_errors(request):
            where = "/".join(str(p) for p in error.absolute_path) or "<root>"
            problems.append(f"{info.name}: rejects {where} ({error.validator})")
    return sorted(set(problems))


def run_conformance(
    session: SupervisedSession,
    *,
    provider: str,
    provider_timeout: float,
    call_timeout: float,
    before_record: Callable[[Episode], None] | None = None,
    nonce: str | None = None,
    now: datetime | None = None,
) -> ConformanceReport:
    """Run the seven checks over ``session`` (opened with ``check_contract=False``)."""
    nonce = nonce or "fmc" + secrets.token_hex(8)
    episode = synthetic_episode(nonce, now or datetime.now(UTC))
    run = _Run(session, call_timeout)
    contract_version: int | None = None
    implementation: Mapping[str, Any] | None = None
    try:
        contract_version, implementation = _checks(
            run, episode, nonce, provider_timeout, before_record
        )
    finally:
        _cleanup(run)
    if 7 not in run.results:
        if run.schema_problems:
            shown = "; ".join(sorted(set(run.schema_problems))[:5])
            run.set(7, "fail", f"responses out of contract: {shown}")
        elif 1 in run.results and run.results[1].outcome == "fail":
            run.set(7, "skip", "nothing to validate: check 1 failed")
        else:
            run.set(7, "pass", "every response matched its schema")
    checks = tuple(run.results[n] for n in sorted(NAMES) if n in run.results)
    return ConformanceReport(
        provider=provider,
        transport=session.target.transport,
        contract=contract_version,
        implementation=implementation,
        checks=checks,
        recorded=len(run.recorded),
        forgotten=len(run.forgotten),
        cleanup_failed=run.cleanup_failed,
    )


def _skip_from(run: _Run, first: int, why: str) -> None:
    for number in range(first, 7):
        run.set(number, "skip", why)


def _checks(
    run: _Run,
    episode: Episode,
    nonce: str,
    provider_timeout: float,
    before_record: Callable[[Episode], None] | None,
) -> tuple[int | None, Mapping[str, Any] | None]:
    # 1. contract
    try:
        tools = run.session.list_tools(run.call_timeout)
    except ProviderError as exc:
        run.set(1, "fail", f"cannot open a session or list tools: {exc.message}")
        _skip_from(run, 2, "check 1 failed")
        return None, None
    if "memory_contract" not in tools:
        run.set(
            1, "fail", "the server has no memory_contract tool: it does not implement the contract"
        )
        _skip_from(run, 2, "check 1 failed")
        return None, None
    try:
        data, _ = run.call("memory_contract", {})
    except (contract.ContractViolation, ProviderError) as exc:
        run.set(1, "fail", f"memory_contract did not answer in contract: {_reason(exc)}")
        _skip_from(run, 2, "check 1 failed")
        return None, None
    version = int(data["contract"])
    implementation = data.get("provider") if isinstance(data.get("provider"), dict) else None
    if version not in contract.SUPPORTED_CONTRACTS:
        run.set(1, "fail", f"contract {version} is not supported (fleetmem speaks 1)")
        _skip_from(run, 2, "check 1 failed")
        return version, implementation
    run.set(1, "pass", f"memory_contract answers contract {version}")

    # 2. input schemas
    requests = canonical_requests(nonce, episode)
    missing = [t for t in contract.TOOLS if t not in tools]
    problems = [
        p for t in contract.TOOLS if t in tools for p in _input_problems(tools[t], requests[t])
    ]
    if missing or problems:
        shown = [f"missing tool {t}" for t in missing] + problems
        run.set(2, "fail", "; ".join(shown[:6]))
    else:
        run.set(2, "pass", "each tool's inputSchema accepts fleetmem's requests")
    if "memory_record_episode" in missing or "memory_recall" in missing:
        _skip_from(run, 3, "a contract tool is missing")
        return version, implementation

    # 3. record
    if before_record is not None:
        before_record(episode)
    try:
        data, _ = run.call("memory_record_episode", requests["memory_record_episode"][0])
    except (contract.ContractViolation, ProviderError) as exc:
        run.set(3, "fail", f"memory_record_episode failed: {_reason(exc)}")
        _skip_from(run, 4, "nothing was recorded")
        return version, implementation
    run.recorded = list(dict.fromkeys(str(i) for i in data["ids"]))
    run.set(3, "pass", f"{len(run.recorded)} id(s) recorded")
    recorded = set(run.recorded)

    # 4. recall under the episode's scope
    try:
        ids, elapsed = run.recall_ids(nonce, episode.scope)
    except (contract.ContractViolation, ProviderError) as exc:
        run.set(4, "fail", f"memory_recall failed: {_reason(exc)}")
        ids, elapsed = [], 0.0
    else:
        if not recorded & set(ids):
            run.set(4, "fail", "recalling the nonce returned none of the recorded ids")
        elif elapsed > provider_timeout:
            run.set(
                4,
                "warn",
                f"the recorded episode came back in {elapsed * 1000:.0f} ms, over provider_timeout"
                f" ({provider_timeout * 1000:.0f} ms): real recalls would be cut off",
            )
        else:
            run.set(4, "pass", f"the recorded episode came back in {elapsed * 1000:.0f} ms")

    # 5. recall under another scope
    try:
        ids, _ = run.recall_ids(nonce, synthetic_scope("other", nonce))
    except (contract.ContractViolation, ProviderError) as exc:
        run.set(5, "fail", f"memory_recall failed: {_reason(exc)}")
    else:
        if recorded & set(ids):
            run.set(
                5,
                "warn",
                "recall under another scope returned a recorded id: the provider does not"
                " filter by scope (fleetmem's index still drops such items)",
            )
        else:
            run.set(5, "pass", "recall under another scope returned none of the ids")

    # 6. forget
    failures = 0
    for provider_id in run.recorded:
        try:
            run.call("memory_forget", contract.forget_request(provider_id))
        except (contract.ContractViolation, ProviderError):
            failures += 1
        else:
            run.forgotten.add(provider_id)
    try:
        unknown, _ = run.call("memory_forget", contract.forget_request(f"unknown-{nonce}"))
    except (contract.ContractViolation, ProviderError):
        unknown = {"forgotten": None}
    if failures:
        run.set(6, "fail", f"memory_forget failed for {failures} id(s)")
        return version, implementation
    try:
        ids, _ = run.recall_ids(nonce, episode.scope)
    except (contract.ContractViolation, ProviderError) as exc:
        run.set(6, "fail", f"memory_recall after forgetting failed: {_reason(exc)}")
        return version, implementation
    if recorded & set(ids):
        run.set(
            6,
            "warn",
            "forgotten ids are still recalled: the provider does not forget"
            " (fleetmem's tombstone still drops them)",
        )
    elif unknown.get("forgotten") is not False:
        run.set(6, "warn", 'memory_forget on an unknown id did not answer {"forgotten": false}')
    else:
        run.set(6, "pass", "forgotten ids are no longer recalled")
    return version, implementation


def _cleanup(run: _Run) -> None:
    """Forget every recorded id not yet forgotten (best effort, counted)."""
    for provider_id in run.recorded:
        if provider_id in run.forgotten:
            continue
        try:
            answer = run.session.call(
                "memory_forget", contract.forget_request(provider_id), run.call_timeout
            )
        except ProviderError:
            run.cleanup_failed += 1
            continue
        if answer.is_error:
            run.cleanup_failed += 1
        else:
            run.forgotten.add(provider_id)


def _reason(exc: BaseException) -> str:
    if isinstance(exc, contract.ContractViolation):
        return exc.reason
    if isinstance(exc, ProviderError):
        return exc.message
    return type(exc).__name__
