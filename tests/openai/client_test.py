"""Drives `chatty-kg serve`'s OpenAI-compatible endpoint (CHATTY_KG_URL) with the official
`openai` Python client, as any OpenAI SDK user would. Run by tests/server.rs; exits non-zero on
any failure and prints "openai client test passed" at the end."""

import os

import openai
from openai import OpenAI

client = OpenAI(base_url=os.environ["CHATTY_KG_URL"] + "/v1", api_key="not-needed", max_retries=0)

# The knowledge graphs are the models.
models = [m.id for m in client.models.list()]
assert "chatty-kg" in models and "default" in models, models

# A question: the answer is the assistant's message; the explanation rides along.
reply = client.chat.completions.create(
    model="default", messages=[{"role": "user", "content": "Who directed Forrest Gump?"}]
)
assert reply.choices[0].message.content == "Robert Zemeckis", reply
assert reply.choices[0].finish_reason == "stop"
assert reply.usage.total_tokens == reply.usage.prompt_tokens + reply.usage.completion_tokens
explanation = reply.model_extra["chatty_kg"]["explanation"]
assert "directedBy" in explanation["sparql"][0]["sparql"], explanation["sparql"]

# The messages are the dialogue: "he" is the earlier answer.
reply = client.chat.completions.create(
    model="chatty-kg",
    messages=[
        {"role": "system", "content": "Answer from the knowledge graph."},
        {"role": "user", "content": "Who directed Forrest Gump?"},
        {"role": "assistant", "content": "Robert Zemeckis"},
        {"role": "user", "content": [{"type": "text", "text": "What else did he direct?"}]},
    ],
)
assert "Cast Away" in reply.choices[0].message.content, reply
assert reply.model_extra["chatty_kg"]["explanation"]["resolved_question"] == "What else did Robert Zemeckis direct?"

# Streamed: the role, the stages, the content, the stop with usage.
stream = client.chat.completions.create(
    model="default", stream=True, messages=[{"role": "user", "content": "When was Big released?"}]
)
content, stages, finish, usage = "", [], None, None
for chunk in stream:
    extra = chunk.model_extra.get("chatty_kg") or {}
    if "stage" in extra:
        stages.append(extra["stage"]["stage"])
    if chunk.choices:
        content += chunk.choices[0].delta.content or ""
        finish = chunk.choices[0].finish_reason or finish
    usage = chunk.usage or usage
assert content == "1988", content
assert finish == "stop"
assert stages[0] == "classified" and stages[-1] == "executed", stages
assert usage is not None and usage.total_tokens == usage.prompt_tokens + usage.completion_tokens, usage

# Bad requests are clear errors, and the server goes on.
for messages in ([], [{"role": "assistant", "content": "Robert Zemeckis"}]):
    try:
        client.chat.completions.create(model="default", messages=messages)
        raise AssertionError("accepted: %r" % messages)
    except openai.BadRequestError as error:
        # The SDK gives the body's `error` object.
        assert error.body["kind"] == "malformed_message", error.body
try:
    client.chat.completions.create(model="no-such-kg", messages=[{"role": "user", "content": "Who directed Big?"}])
    raise AssertionError("an unknown model was accepted")
except openai.APIStatusError as error:
    assert error.body["kind"] == "unknown_kg", error.body

# A stream the client stops reading half-way: the server still answers the next question.
stream = client.chat.completions.create(
    model="default", stream=True, messages=[{"role": "user", "content": "Who starred in Big?"}]
)
next(iter(stream))
stream.close()
reply = client.chat.completions.create(model="default", messages=[{"role": "user", "content": "When was Big released?"}])
assert reply.choices[0].message.content == "1988", reply

# Tied to a stored session by a header: the server keeps the dialogue, the client sends only the
# new question.
SESSION = "X-Chatty-KG-Session"
raw = client.chat.completions.with_raw_response.create(
    model="default",
    messages=[{"role": "user", "content": "Who directed Forrest Gump?"}],
    extra_headers={SESSION: "new"},
)
session = raw.headers[SESSION.lower()]
reply = raw.parse()
assert reply.choices[0].message.content == "Robert Zemeckis", reply
assert reply.model_extra["chatty_kg"]["session"] == session and reply.model_extra["chatty_kg"]["turn"] == 0, reply
reply = client.chat.completions.create(
    model="default",
    messages=[{"role": "user", "content": "What else did he direct?"}],
    extra_headers={SESSION: session},
)
assert "Cast Away" in reply.choices[0].message.content, reply
assert reply.model_extra["chatty_kg"]["turn"] == 1, reply
stream = client.chat.completions.create(
    model="chatty-kg",
    stream=True,
    messages=[{"role": "user", "content": "When was Big released?"}],
    extra_headers={SESSION: session},
)
last = {}
for chunk in stream:
    last = chunk.model_extra.get("chatty_kg") or last
assert last.get("session") == session and last.get("turn") == 2, last

# In a session a clarifying question can be answered by its number, as on the page.
raw = client.chat.completions.with_raw_response.create(
    model="homonyms",
    messages=[{"role": "user", "content": "Who directed Crash?"}],
    extra_headers={SESSION: "new"},
)
crash = raw.headers[SESSION.lower()]
reply = raw.parse()
explanation = reply.model_extra["chatty_kg"]["explanation"]
assert explanation["outcome"]["status"] == "clarify", explanation["outcome"]
assert reply.choices[0].message.content.endswith("Which one do you mean?"), reply.choices[0].message.content
second = explanation["outcome"]["clarification"]["options"][1]
reply = client.chat.completions.create(
    model="homonyms", messages=[{"role": "user", "content": "2"}], extra_headers={SESSION: crash}
)
director = "David Cronenberg" if "1996" in second["description"] else "Paul Haggis"
assert reply.choices[0].message.content == director, (second, reply)

# Somebody else's or an unknown session, and a session asked through another graph's model.
for model, header, status, kind in (
    ("default", "0" * 32, openai.NotFoundError, "no_such_session"),
    ("default", crash, openai.BadRequestError, "malformed_message"),
):
    try:
        client.chat.completions.create(
            model=model, messages=[{"role": "user", "content": "Who directed Big?"}], extra_headers={SESSION: header}
        )
        raise AssertionError("accepted session %r" % header)
    except status as error:
        assert error.body["kind"] == kind, error.body

print("openai client test passed")
