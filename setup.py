"""The one thing pyproject.toml cannot say yet without a warning: the optional compiled search.

``board_rules/_fastgen.c`` is the compiled twin of ``board_rules/fastgen.py``. ``optional``:
where no C compiler (or no Python headers) is found, the install goes on and the Python
search runs.
"""

from setuptools import Extension, setup

setup(ext_modules=[Extension("board_rules._fastgen", ["board_rules/_fastgen.c"], optional=True)])
