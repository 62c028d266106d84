"""Parameter sweeps: ``name=v1,v2`` specs expand to a cartesian product."""

import itertools


def parse(specs):
    """['underload=0.6,0.7', 'window=12'] -> list of parameter dicts."""
    axes = []
    for spec in specs:
        name, sep, values = spec.partition('=')
        if not sep or not name or not values:
            raise ValueError('bad --sweep %r: expected name=value[,value...]' % spec)
        try:
            axes.append([(name, _number(v)) for v in values.split(',')])
        except ValueError:
            raise ValueError('bad --sweep %r: values must be numbers' % spec) from None
    return [dict(combo) for combo in itertools.product(*axes)] if axes else [None]


def _number(text):
    return int(text) if text.strip().isdigit() else float(text)
