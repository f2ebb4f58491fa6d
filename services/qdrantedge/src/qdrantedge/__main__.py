"""python -m qdrantedge: run the service."""

import sys

from .server import main

sys.exit(main())
