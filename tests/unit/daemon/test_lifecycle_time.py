"""nova's timestamps, with or without a UTC offset, compare as naive UTC."""

import datetime

from nova_drs.daemon import lifecycle

TEN = datetime.datetime(2026, 11, 23, 10, 0, 0)


def test_offsets_are_applied_not_dropped():
    assert lifecycle._parse_time('2026-11-23T12:00:00+02:00') == TEN
    assert lifecycle._parse_time('2026-11-23T05:00:00-05:00') == TEN


def test_nova_shapes_parse_to_naive_utc():
    for value in ('2026-11-23T10:00:00.000000', '2026-11-23T10:00:00Z',
                  '2026-11-23 10:00:00'):
        assert lifecycle._parse_time(value) == TEN
    assert lifecycle._parse_time(None) is None
    assert lifecycle._parse_time('') is None
