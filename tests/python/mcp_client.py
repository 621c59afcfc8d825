"""Drive `apply-patch mcp` with the official MCP Python SDK's stdio client.

Usage: mcp_client.py BINARY ROOT STATE

ROOT holds `app.py` (see tests/it/mcp_python.rs). The server is started as an operator
would start it, with one `--post-check`. Checks what a Python MCP host sees: the tool list
(annotations, standard input schemas, output schemas), the results validated by the SDK
against those output schemas, the one error shape, and that a model-supplied command never
runs. Prints "mcp python client: ok" at the end; any failed check exits non-zero.
"""

import asyncio
import json
import os
import sys

from jsonschema import Draft202012Validator
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

STANDARD_FORMATS = {
    "date-time", "date", "time", "duration", "email", "idn-email", "hostname",
    "idn-hostname", "ipv4", "ipv6", "uri", "uri-reference", "iri", "iri-reference", "uuid",
    "uri-template", "json-pointer", "relative-json-pointer", "regex",
}


def formats(schema):
    """Every `format` value anywhere in a schema."""
    found = []
    if isinstance(schema, dict):
        for key, value in schema.items():
            if key == "format" and isinstance(value, str):
                found.append(value)
            found.extend(formats(value))
    elif isinstance(schema, list):
        for item in schema:
            found.extend(formats(item))
    return found


def check(condition, what):
    if not condition:
        raise SystemExit(f"mcp python client: FAILED: {what}")


def wire(obj):
    """An SDK object as it travels on the wire (camelCase keys in every SDK version)."""
    return obj.model_dump(by_alias=True, exclude_none=True, mode="json")


def failed(result):
    return wire(result).get("isError") is True


OUTPUT_SCHEMAS = {}


def conforms(tool, result):
    """Every result, refusals included, follows the tool's output schema."""
    data = wire(result).get("structuredContent")
    Draft202012Validator(OUTPUT_SCHEMAS[tool]).validate(data)
    return result


def report(result):
    """The JSON report of a result: structuredContent, which the text repeats."""
    data = wire(result).get("structuredContent")
    check(data is not None, f"structured content in {result}")
    text = json.loads(wire(result)["content"][0]["text"])
    check(text == data, "the text block is the same JSON as structuredContent")
    return data


async def check_tools(session):
    tools = {t.name: wire(t) for t in (await session.list_tools()).tools}
    check(sorted(tools) == ["apply_patch", "check_balance", "confirm", "edit", "preview",
                            "range", "read", "undo"], f"tool names {sorted(tools)}")
    for name, tool in tools.items():
        a = tool.get("annotations", {})
        reading = name in ("read", "range", "check_balance", "preview")
        check(a.get("readOnlyHint") is reading, f"{name} readOnlyHint")
        check(isinstance(a.get("idempotentHint"), bool), f"{name} idempotentHint")
        if not reading:
            check(a.get("destructiveHint") is True, f"{name} destructiveHint")
        Draft202012Validator.check_schema(tool["inputSchema"])
        bad = [f for f in formats(tool["inputSchema"]) if f not in STANDARD_FORMATS]
        check(not bad, f"{name} input schema uses non-standard formats {bad}")
        check("outputSchema" in tool, f"{name} has an output schema")
        Draft202012Validator.check_schema(tool["outputSchema"])
        OUTPUT_SCHEMAS[name] = tool["outputSchema"]
    props = tools["apply_patch"]["inputSchema"]["properties"]
    check(props["post_check"]["type"] == "boolean", "one operator check is a boolean")
    check(props["window"]["type"] == "integer", "apply_patch takes window")
    check(tools["read"]["inputSchema"]["properties"]["start_line"]["minimum"] == 1,
          "start_line counts from 1")


async def check_calls(session, root):
    bad = conforms("read", await session.call_tool("read", {"path": "app.py", "start_line": 0}))
    check(failed(bad) and report(bad)["error"]["code"] == "usage", "start_line 0 is usage")
    bad = conforms("read", await session.call_tool("read", {"start_line": 1}))
    check(failed(bad) and report(bad)["error"]["code"] == "usage", "a missing path is usage")

    # The SDK validates a successful result against the tool's output schema.
    read = conforms("read", await session.call_tool("read", {"path": "app.py"}))
    check(not failed(read), f"read succeeds: {read}")
    served = wire(read)["structuredContent"]
    base = served["base"]
    check(served["start_line"] == 1, "read numbers from 1")

    patch = ("*** Begin Patch\n*** Update File: app.py\n*** Base: " + base + "\n"
             "@@ def greet(name):\n-    return 'hello ' + name\n+    return 'hi ' + name\n"
             "*** End Patch\n")
    refused = conforms("apply_patch", await session.call_tool("apply_patch", {"patch": patch, "post_check": "touch pwned"}))
    check(failed(refused) and report(refused)["error"]["code"] == "usage",
          "a model's command is refused")
    check(not os.path.exists(os.path.join(root, "pwned")), "the model's command never ran")

    applied = conforms("apply_patch", await session.call_tool("apply_patch", {"patch": patch, "post_check": True}))
    check(not failed(applied), f"apply_patch succeeds: {applied}")
    data = report(applied)
    check(data["ok"] and data["files"][0]["path"] == "app.py", f"the report: {data}")
    check(data["verification"]["status"] == "passed", "the operator's check ran")
    check(os.path.exists(os.path.join(root, "checked")), "the operator's check ran")
    with open(os.path.join(root, "app.py")) as f:
        check("'hi ' + name" in f.read(), "apply_patch wrote the change")

    undone = conforms("undo", await session.call_tool("undo", {}))
    check(not failed(undone) and report(undone)["undone"] is not None, "undo undid it")
    nothing = conforms("undo", await session.call_tool("undo", {}))
    check(not failed(nothing) and report(nothing)["undone"] is None, "undo of nothing succeeds")


async def main(binary, root, state):
    env = {"PATH": os.environ.get("PATH", ""), "HOME": state, "XDG_STATE_HOME": state}
    params = StdioServerParameters(command=binary, args=["mcp", "--post-check", "touch checked"],
                                   cwd=root, env=env)
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            check("`apply_patch`" in wire(init).get("instructions", ""),
                  "instructions name apply_patch")
            await check_tools(session)
            await check_calls(session, root)
    print("mcp python client: ok")


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:4]))
