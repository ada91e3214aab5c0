"""``python -m wiremcp`` is the ``wiremcp`` command."""

import sys

from .cli import main

sys.exit(main())
