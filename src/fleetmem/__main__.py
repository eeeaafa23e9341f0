"""``python -m fleetmem`` is the same as the ``fleetmem`` command."""

import sys

from fleetmem.surfaces.cli.main import main

sys.exit(main())
