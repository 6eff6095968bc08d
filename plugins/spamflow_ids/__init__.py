"""Built-in plugin ``ids``: the shared-identifier detector.

Spam networks change layouts, hosts and domains, but their operator keeps one set of
accounts: affiliate tracking ids, ad-network publisher ids, analytics and tag-manager ids,
shortlinks. Hosts of different registered domains that carry the same such id are joined
into networks (docs/ids.md).
"""

__version__ = "1.0.0"
