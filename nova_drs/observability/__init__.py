"""What operators see of nova-drs: Prometheus metrics, power model, energy reports."""
