"""Scale a running server to another flavor (CloudStack's scaleVirtualMachine)."""
