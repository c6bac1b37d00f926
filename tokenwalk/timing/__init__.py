"""Timing: the fitted model of step times, its calibration on measurements, the published runs."""
