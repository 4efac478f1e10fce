"""sluice's Python SDK: what a site admin writes a policy with, on top of the bindings
componentize-py generates for a world of `wit/`.

This module is what every kind shares: the plugin's settings as a dictionary with typed readers,
and logging through the host. One module per kind builds that kind's export from plain
functions and keeps what the contract says the guest keeps:

* `sluice_policy.priority`: named job columns, the association tree (`export(compute)`);
* `sluice_policy.selection`: the guest's copy of the node table (`export(place)`);
* `sluice_policy.gres`: device picks and environment (`export(pick, env, validate)`);
* `sluice_policy.hres`: the pass's resources and layers, with this pass's charges counted
  (`export(eligible, charge)`).

componentize-py calls an export on a fresh Python object each time, so whatever must last
between calls lives at module level, for the component instance's life.
"""

from wit_world.imports import host


class Settings(dict):
    """The plugin's settings (`key = value`, nested tables as dotted keys), read once."""

    def number(self, key, default):
        """`key` as a number, or `default` (with a warning) when it is not one."""
        value = self.get(key, default)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            warn(f"{key} must be a number, got {value!r}; using {default}")
            return default
        return value

    def text(self, key, default=None):
        """`key` as text, or `default`."""
        value = self.get(key, default)
        return value if isinstance(value, str) else default


_settings = None


def settings():
    """The plugin's settings as a dictionary; fixed for a plugin generation, so read once."""
    global _settings
    if _settings is None:
        _settings = Settings({s.key: s.value.value for s in host.settings()})
    return _settings


def _log(level, message, **fields):
    host.log(level, message, [(k, str(v)) for k, v in fields.items()])


def error(message, **fields):
    """Logs `message` at error level, tagged with the plugin by the host."""
    _log(host.Level.ERROR, message, **fields)


def warn(message, **fields):
    """Logs `message` at warn level."""
    _log(host.Level.WARN, message, **fields)


def info(message, **fields):
    """Logs `message` at info level."""
    _log(host.Level.INFO, message, **fields)


def debug(message, **fields):
    """Logs `message` at debug level; costly in a per-job loop."""
    _log(host.Level.DEBUG, message, **fields)


def bitmap_nodes(words):
    """The node indices set in a bitmap of 64-bit words (bit n of word n // 64), ascending."""
    out = []
    for w, word in enumerate(words):
        base = w * 64
        while word:
            low = word & -word
            out.append(base + low.bit_length() - 1)
            word ^= low
    return out


def nodes_bitmap(nodes, words):
    """A bitmap of `words` 64-bit words with `nodes` set (indices past it are left out)."""
    out = [0] * words
    for n in nodes:
        if 0 <= n < words * 64:
            out[n // 64] |= 1 << (n % 64)
    return out
