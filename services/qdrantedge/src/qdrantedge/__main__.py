"""python -m qdrantedge: run the service; python -m qdrantedge selftest: run
the service's own tests (tests/ next to src/), as the image's CI check does."""

import os
import sys
import unittest

from .server import main

if sys.argv[1:2] == ["selftest"]:
    tests = os.path.join(os.path.dirname(__file__), "..", "..", "tests")
    result = unittest.TextTestRunner(verbosity=2).run(unittest.defaultTestLoader.discover(os.path.abspath(tests)))
    sys.exit(0 if result.wasSuccessful() else 1)
sys.exit(main())
