"""The Manim scenes of figures 6 (residual-layer), 7 (decode-head) and 8 (kv-cache), one
module each, imported by their figure's render() only (importing them imports Manim)."""
