"""``python -m probeval``."""

import sys

from probeval.cli import main

sys.exit(main())
