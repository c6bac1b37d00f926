"""Helpers the tests share: paths, stand-ins, builds, browsers, SVG checks."""
