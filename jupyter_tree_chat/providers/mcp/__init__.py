"""Tools from MCP servers, beside the kernel's own functions, through the official ``mcp`` SDK.

- ``config``: the servers as users write them (``.mcp.json``, ``TreeChat.mcp_servers``);
- ``names``: ``server:tool`` for people, a valid API name on the wire, and back;
- ``servers``: the kernel's servers, on one background event loop (started on first use,
  stopped with the kernel; ``guard`` keeps a stdio server from outliving it);
- ``results``: a tool's result as ``tool_result`` content;
- ``tools``: ``McpTools``, the servers' tools as the session's ``ToolSource``.

Nothing here imports the SDK until a server starts: ``%load_ext`` and a cell without MCP
tools pay nothing for it. Without the ``mcp`` package a server is one line saying how to
get it (``pip install 'jupyter-tree-chat[mcp]'``).

``shared_loop`` is that one event loop. May import ``providers.base``, ``providers.tools``
(the toolbox its tools join) and the core below (``errors``); never a wire.
"""
