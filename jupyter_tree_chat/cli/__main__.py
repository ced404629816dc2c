"""``python -m jupyter_tree_chat.cli``: the console script, run without its wrapper."""

import sys

from . import main

sys.exit(main())
