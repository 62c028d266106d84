"""Per-aggregate CPU/RAM overcommit: accounting, recording, placement sync."""
