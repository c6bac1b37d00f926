"""Publish the article: content/ + figures/ + the article's numbers -> site/.

    python build.py                 build into site/ (only figures whose key changed render)
    python build.py --force         render every figure again
    python build.py --serve         build, serve on http://127.0.0.1:8000/, rebuild (with the
                                    build's own code imported afresh) and reload the browser
                                    when content/, figures/, article/, tokenwalk/ or publish/ change
    python build.py --out DIR --content DIR --figures DIR --numbers FILE.json --cache DIR
                                    build elsewhere, from other sources (tests use these)
    python build.py --quiet         the summary only, no line per figure

The build itself is publish/ (publish/pipeline.py: the steps). Run by a Python without the
build's packages, this re-runs itself with the project's .venv/bin/python when there is one,
and otherwise says in one line what to run.
"""

import os
import sys
from pathlib import Path

from publish import missing_requirements

if __name__ == "__main__":
    if missing_requirements():
        venv = Path(__file__).resolve().parent / ".venv"
        if (venv / "bin" / "python").is_file() and Path(sys.prefix).resolve() != venv.resolve() \
                and not os.environ.get("TOKENWALK_BUILD_REEXEC"):
            os.environ["TOKENWALK_BUILD_REEXEC"] = "1"
            os.execv(venv / "bin" / "python", [str(venv / "bin" / "python"), __file__, *sys.argv[1:]])
        sys.exit(f"build.py: {sys.executable} lacks {', '.join(missing_requirements())}; "
                 "run `make setup`, then `.venv/bin/python build.py` (or `make site`)")
    from publish.pipeline import main
    sys.exit(main())
