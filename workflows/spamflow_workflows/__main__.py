"""``python -m spamflow_workflows``: the ``spamflow`` command without the console script."""

import sys

from spamflow_workflows.cli import main

sys.exit(main())
