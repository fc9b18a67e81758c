"""Reports of one trajectory: terminal (rich), Markdown, and a self-contained HTML page."""

from irscope.report.model import KEY_COUNTERS, ReportModel, build_model

__all__ = ["KEY_COUNTERS", "ReportModel", "build_model"]
