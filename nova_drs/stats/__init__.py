"""Statistics pipeline: samples published by computes, stored by the collector."""
