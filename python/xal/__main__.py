"""python -m xal: the backends and devices, as xal-info prints them."""

import sys

from ._info import main

sys.exit(main())
