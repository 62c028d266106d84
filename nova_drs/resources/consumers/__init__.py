"""Built-in scheduler consumer plugins (namespace ``nova_drs.scheduler.consumers``)."""
