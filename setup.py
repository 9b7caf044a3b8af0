"""The one thing pyproject.toml cannot say yet without a warning: the optional compiled parts.

``board_rules/_fastgen.c`` is the compiled twin of ``board_rules/fastgen.py`` (and of the walks
of ``board_rules/reach.py``), ``engine/_heuristic.c`` that of ``engine/heuristic.py``'s terms,
``vision/_fieldscore.c`` that of the field finder's per-sample work (``vision/field_model.py``), built
without fused multiply-adds so that it reads a photo's colours as OpenCV does, to the last bit (and
with no ``errno`` from its maths, so that rounding and roots are single instructions).
``optional``: where no C compiler (or no Python headers) is found, the install goes on and the
Python runs.
"""

import sys

from setuptools import Extension, setup

EXACT_FLOATS = [] if sys.platform == "win32" else ["-ffp-contract=off", "-fno-math-errno"]

setup(
    ext_modules=[
        Extension(
            "board_rules._fastgen", ["board_rules/_fastgen.c"], depends=["board_rules/_step_api.h"], optional=True
        ),
        Extension("engine._heuristic", ["engine/_heuristic.c"], depends=["board_rules/_step_api.h"], optional=True),
        Extension("vision._fieldscore", ["vision/_fieldscore.c"], optional=True, extra_compile_args=EXACT_FLOATS),
    ]
)
