"""Tools: functions the model may call, the session's toolbox, and their wire rules.

- ``functions``: plain Python functions the user registers (``@tool``), described and run here;
- ``toolbox``: the tools a session offers, the kernel's own and those from elsewhere (MCP);
- ``wire``: the tools a request's path used, sent as the Messages API accepts them.

May import ``providers.base`` and the core below (``errors``); ``providers.mcp`` plugs its
tools into the toolbox (it imports this folder, never the other way).
"""
