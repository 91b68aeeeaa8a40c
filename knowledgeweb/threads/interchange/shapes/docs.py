"""What the import accepts, in words: for error messages and for the API's documentation."""

from __future__ import annotations

ACCEPTED_BODIES = (
    '{"title", "agent_name", "messages": [...]} (this API\'s body and JSON export, LangGraph state '
    'values, OpenAI and Anthropic requests); an OpenAI Responses request {"input": [...]}; a bare '
    "list of messages or Responses items; a LangGraph Platform thread state "
    '{"values": {"messages": [...]}}; a LangGraph Platform /history list of thread states; a list '
    "of LangGraph state values (get_state_history, newest first); "
    'a LangServe response {"output": ...} (and an OpenAI Responses response)'
)
ACCEPTED_MESSAGES = (
    "a LangChain message dict with 'type', its {'type', 'data'} wrapper, its "
    "{'lc': 1, 'type': 'constructor'} form, an OpenAI / Anthropic dict with 'role', or an OpenAI "
    "Responses item (message, function_call, function_call_output, reasoning)"
)

#: For the API's documentation of the import body (OpenAPI) and of its messages.
IMPORT_BODIES_DOC = """One of:

- `{"title"?, "agent_name"?, "messages": [...]}`: this API's own body and JSON export, a LangGraph
  state's values or Platform `runs/wait` result, an OpenAI chat request, or an Anthropic Messages
  request (its `system` becomes the first message);
- an OpenAI Responses request `{"input": [...], "instructions"?}` (its `instructions` become the
  first message) or response `{"output": [...]}`;
- a bare list of messages (or of Responses items);
- a LangGraph Platform thread state `{"values": {"messages": [...]}, ...}` (`GET /threads/{id}/state`);
- a LangGraph Platform `/history` list of thread states: the latest state is imported;
- a list of LangGraph state values (`[s.values for s in graph.get_state_history(config)]`, newest
  first as LangGraph lists them): the first, newest, is imported;
- a LangServe response `{"output": ..., "metadata": ...}` whose output is a list of messages,
  `{"messages": [...]}` or one message.

Without a `title` the thread is titled by its first human message. Anything else answers 422
naming what was found."""

IMPORT_MESSAGES_DOC = """Each message is one of: a LangChain dict with `type` (`human`, `ai`, `tool`,
`system` or the class names `HumanMessage`...; `model_dump()` and LangServe output), the
`{"type", "data"}` wrapper of `messages_to_dict`, the `{"lc": 1, "type": "constructor", "id": [...],
"kwargs": {...}}` form of `dumpd`, an OpenAI / Anthropic dict with `role` (`user`, `assistant`,
`system`, `developer`, `tool` with `tool_call_id`), or an OpenAI Responses item (`message`,
`function_call`, `function_call_output`, `reasoning`; the items of one model turn become one AI
message, its reasoning kept as a part). `content` is a string or a list of parts: text
parts are joined into the text; `tool_use` / `tool_call` parts, LangChain's `tool_calls` and
`invalid_tool_calls` and OpenAI's `tool_calls` (JSON-string `arguments`) become the AI message's
tool calls; each `tool_result` part becomes a tool message; thinking, reasoning, refusal, image,
audio and file parts are kept in the message's `parts` (image and file data are dropped, only
their media type is kept). `artifact` may be any JSON; reserved evidence keys are stripped from an
object artifact. A tool message that holds a knowledgeweb search result in a client's wrapper
(`artifact.structured_content` of langchain-mcp-adapters, the whole API body as artifact or as
JSON content, an MCP `CallToolResult` with `structuredContent`) is imported as that result."""
