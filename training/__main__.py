"""``python -m training`` (``./run train``): the training of the referee's ears."""

import sys

from training.cli import main

sys.exit(main())
