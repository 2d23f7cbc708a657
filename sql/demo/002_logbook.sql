-- pgmcp demo dataset, part 2: the observers' logbook, ready for similarity_search.
--
--   demo.logbook_entries    600   free-text notes, with a tsvector (GIN) and a vector(256)
--                                 embedding (HNSW, cosine)
--
-- The embeddings are made by pgmcp's offline provider (model pgmcp-hash-v1: feature hashing of
-- words and character trigrams, src/embeddings/offline.ts), computed here in SQL with the same
-- algorithm so the demo needs no client pass: md5 of each feature picks a dimension and a sign.
-- It is lexical, not semantic. A test checks that these vectors equal the provider's.

CREATE FUNCTION pg_temp.pgmcp_offline_embedding(doc text, dims integer) RETURNS real[]
LANGUAGE sql IMMUTABLE AS $$
  WITH words AS (
    SELECT w FROM regexp_split_to_table(lower(doc), '[^a-z0-9]+') AS w
    WHERE w <> '' AND w <> ALL (ARRAY['a', 'an', 'and', 'are', 'as', 'at', 'be', 'by', 'for',
      'from', 'has', 'have', 'in', 'is', 'it', 'its', 'of', 'on', 'or', 'that', 'the', 'this',
      'to', 'was', 'were', 'with'])
  ), features AS (
    SELECT w AS f, 1.0::float8 AS weight FROM words
    UNION ALL
    SELECT substr('<' || w || '>', i, 3), 0.35::float8 FROM words, generate_series(1, length(w)) AS i
  ), counted AS (
    SELECT f, weight * (1 + ln(count(*))) AS v FROM features GROUP BY f, weight
  ), hashed AS (
    SELECT ('x' || substr(md5(f), 1, 8))::bit(32)::bigint AS h, v FROM counted
  ), buckets AS (
    SELECT (h % dims)::integer AS b, sum(CASE WHEN h >= 2147483648 THEN -v ELSE v END) AS v
    FROM hashed GROUP BY 1
  ), norm AS (
    SELECT sqrt(sum(v * v)) AS n FROM buckets
  )
  SELECT array_agg(coalesce(b.v / nullif(norm.n, 0), 0)::real ORDER BY g)
  FROM generate_series(0, dims - 1) AS g LEFT JOIN buckets AS b ON b.b = g CROSS JOIN norm
$$;

CREATE TABLE demo.logbook_entries (
  id         integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  session_id integer NOT NULL REFERENCES demo.observing_sessions (id) ON DELETE CASCADE,
  written_at timestamptz NOT NULL,
  topic      text NOT NULL CHECK (topic IN ('weather', 'equipment', 'target', 'site')),
  body       text NOT NULL,
  body_tsv   tsvector GENERATED ALWAYS AS (to_tsvector('english', body)) STORED,
  embedding  vector(256)
);
COMMENT ON TABLE demo.logbook_entries IS 'Free-text notes observers wrote during their sessions: weather, equipment trouble, targets, the site. Search them with similarity_search.';
COMMENT ON COLUMN demo.logbook_entries.session_id IS 'Session the note was written in.';
COMMENT ON COLUMN demo.logbook_entries.written_at IS 'When the note was written (UTC).';
COMMENT ON COLUMN demo.logbook_entries.topic IS 'What the note is mostly about: weather, equipment, target or site.';
COMMENT ON COLUMN demo.logbook_entries.body IS 'The note itself, as the observer wrote it.';
COMMENT ON COLUMN demo.logbook_entries.body_tsv IS 'Full-text index of body (english configuration).';
COMMENT ON COLUMN demo.logbook_entries.embedding IS 'Embedding of body by pgmcp''s offline provider (pgmcp-hash-v1, 256 dimensions, lexical). Refresh with: pgmcp embed --table demo.logbook_entries --text-column body.';

WITH parts (topic, openers, details, closers) AS (VALUES
  ('weather',
   ARRAY['Thin cirrus drifted in after midnight', 'Dew formed on the corrector plate within an hour',
         'Strong gusts shook the mount all evening', 'The sky was perfectly transparent until dawn',
         'A humid haze hung over the valley', 'Fog rolled up from the river around eleven'],
   ARRAY['and the stars twinkled badly', 'so the dew heater ran at full power',
         'which made long exposures useless', 'and the seeing stayed below two arcseconds',
         'and the limiting magnitude dropped', 'so we paused and waited for a clearing'],
   ARRAY['Closed the dome early.', 'Logged the conditions for the weather study.',
         'Best night of the month.', 'Covered the optics before packing up.']),
  ('equipment',
   ARRAY['The focuser slipped under the weight of the camera', 'The camera cooler failed to reach minus twenty',
         'Guiding drifted slowly in declination', 'Flat frames showed dust donuts on the sensor',
         'The mount lost its alignment after a meridian flip', 'The filter wheel jammed between V and R'],
   ARRAY['so the first hour of frames is soft', 'and the dark current doubled',
         'and stars trailed on every sub', 'so the flats were retaken at dusk',
         'and a full realignment took forty minutes', 'which cost us the I band sequence'],
   ARRAY['Ticket opened with the technician.', 'Spare part ordered.',
         'Worked around it with manual tweaks.', 'Needs attention before the next run.']),
  ('target',
   ARRAY['Imaged the Andromeda Galaxy in three filters', 'The Orion Nebula core was saturated in short frames',
         'Measured the Pleiades for the cluster survey', 'Followed Betelgeuse for the variability programme',
         'Tried the Whirlpool Galaxy at high magnification', 'The Ring Nebula showed its central star clearly'],
   ARRAY['with sharp detail in the dust lanes', 'and the brightness matched the catalogue',
         'while the variable star dimmed noticeably', 'and the spiral arms stood out against the sky glow',
         'and the photometry needs a second calibration', 'with faint outer structure visible'],
   ARRAY['Data uploaded to the archive.', 'Great target for beginners.',
         'Will repeat next week for comparison.', 'Shared the image with the members.']),
  ('site',
   ARRAY['The access road was flooded near the gate', 'Light pollution from the new stadium brightened the south',
         'The generator ran out of fuel at two', 'Visitors from the school came for open night',
         'A fox got into the warm room again', 'The power cut lasted twenty minutes'],
   ARRAY['so we arrived late', 'and the southern horizon became useless',
         'and the telescopes stopped tracking', 'and we showed them Saturn and the Moon',
         'which startled everyone', 'and the computers had to reboot'],
   ARRAY['Reported to the site manager.', 'Mentioned it in the newsletter.',
         'Checklist updated.', 'Everyone enjoyed it.'])
)
INSERT INTO demo.logbook_entries (session_id, written_at, topic, body)
SELECT s.id,
       s.starts_at + (s.ends_at - s.starts_at) * ((hashint4(g * 83) & 2147483647)::float8 / 2147483648),
       p.topic,
       p.openers[1 + (hashint4(g * 89) & 2147483647) % 6] || ', ' ||
       p.details[1 + (hashint4(g * 97) & 2147483647) % 6] || '. ' ||
       p.closers[1 + (hashint4(g * 101) & 2147483647) % 4]
FROM generate_series(1, 600) AS g
JOIN demo.observing_sessions AS s ON s.id = 1 + (hashint4(g * 79) & 2147483647) % 1200
JOIN parts AS p ON p.topic = (ARRAY['weather', 'equipment', 'target', 'site'])[1 + (hashint4(g * 71) & 2147483647) % 4]
ORDER BY g;

UPDATE demo.logbook_entries SET embedding = pg_temp.pgmcp_offline_embedding(body, 256)::vector(256);

CREATE INDEX logbook_entries_session_idx ON demo.logbook_entries (session_id);
CREATE INDEX logbook_entries_body_tsv_idx ON demo.logbook_entries USING gin (body_tsv);
CREATE INDEX logbook_entries_embedding_idx ON demo.logbook_entries USING hnsw (embedding vector_cosine_ops);
COMMENT ON INDEX demo.logbook_entries_embedding_idx IS 'HNSW index for similarity_search on embedding (cosine distance, operator <=>).';
