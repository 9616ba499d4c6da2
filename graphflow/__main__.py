"""``python -m graphflow`` is the ``graphflow`` command."""

import sys

from graphflow.cli.main import main

sys.exit(main())
