"""Built-in compute resource plugins (namespace ``nova_drs.compute.resources``)."""
