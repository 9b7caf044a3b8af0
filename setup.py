"""The one thing pyproject.toml cannot say yet without a warning: the optional compiled parts.

``board_rules/_fastgen.c`` is the compiled twin of ``board_rules/fastgen.py`` (and of the walks
of ``board_rules/reach.py``), ``engine/_heuristic.c`` that of ``engine/heuristic.py``'s terms.
``optional``: where no C compiler (or no Python headers) is found, the install goes on and the
Python runs.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension("board_rules._fastgen", ["board_rules/_fastgen.c"], optional=True),
        Extension("engine._heuristic", ["engine/_heuristic.c"], optional=True),
    ]
)
