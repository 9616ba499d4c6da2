"""Make the shared helpers of these tests (portable_cases.py) importable."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
