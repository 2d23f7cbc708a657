-- pgmcp state schema, version 2.
-- description: conversations (chat history per owner, with token usage)
--
-- The owner is part of the key: a conversation id names nothing outside its owner's own
-- list, so a lookup of another owner's id finds no row (a 404), and a client-chosen id
-- (useChat's) can never collide with someone else's. title and preview are kept beside
-- the messages so listing never reads the jsonb.

CREATE TABLE pgmcp.conversations (
  owner text NOT NULL,
  id text NOT NULL,
  username text NOT NULL,
  title text NOT NULL,
  title_set boolean NOT NULL DEFAULT false,
  preview text NOT NULL DEFAULT '',
  provider text,
  model text,
  connection text,
  messages jsonb NOT NULL DEFAULT '[]',
  message_count integer NOT NULL DEFAULT 0,
  input_tokens bigint NOT NULL DEFAULT 0,
  output_tokens bigint NOT NULL DEFAULT 0,
  total_tokens bigint NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (owner, id)
);
CREATE INDEX conversations_recent ON pgmcp.conversations (owner, updated_at DESC, id DESC);
