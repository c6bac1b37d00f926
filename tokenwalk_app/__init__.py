"""The page's interactive figures: entry points (run by Pyodide) and the simulator's HTML view."""
