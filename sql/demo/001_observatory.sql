-- pgmcp demo dataset: the Clearsky Observatory Network, a fictional group of small
-- observatories whose members log nightly observations of stars, galaxies and nebulae.
--
-- Everything lives in schema "demo". pgmcp loads this file (and any later sql/demo/*.sql,
-- in name order) in ONE transaction on the first start of the embedded database; the schema
-- comment below is the marker that the dataset is complete, so it is never loaded twice.
-- The caller owns BEGIN/COMMIT: this file must not contain transaction control.
--
-- Data is generated with generate_series and hashint4, never random(): every installation
-- gets exactly the same rows (about 10,000 in total), which keeps examples and tests stable.
--
--   demo.sites                8   observatory sites
--   demo.telescopes          24   three per site
--   demo.observers          150   members of the network
--   demo.celestial_objects 1600   catalogue, with a vector(8) spectral signature (HNSW index)
--   demo.observing_sessions 1200   one observer at one telescope for one night
--   demo.observations      7000   one measurement of one object in one filter

CREATE EXTENSION IF NOT EXISTS vector;

CREATE SCHEMA demo;
COMMENT ON SCHEMA demo IS 'pgmcp demo dataset v1: the Clearsky Observatory Network (sites, telescopes, observers, a catalogue of celestial objects, observing sessions and observations).';

-- Deterministic "random" number in [0, 1) for an integer seed. Temporary: gone with the session.
CREATE FUNCTION pg_temp.unit(seed integer) RETURNS double precision
LANGUAGE sql IMMUTABLE AS $$ SELECT (hashint4(seed) & 2147483647)::double precision / 2147483648 $$;

------------------------------------------------------------------------------------------
-- Types
------------------------------------------------------------------------------------------

CREATE TYPE demo.object_kind AS ENUM
  ('star', 'variable_star', 'double_star', 'star_cluster', 'nebula', 'galaxy');
COMMENT ON TYPE demo.object_kind IS 'Broad class of a catalogued celestial object.';

------------------------------------------------------------------------------------------
-- Sites and telescopes
------------------------------------------------------------------------------------------

CREATE TABLE demo.sites (
  id           smallint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  name         text NOT NULL UNIQUE,
  country      text NOT NULL,
  latitude     numeric(7,4) NOT NULL CHECK (latitude BETWEEN -90 AND 90),
  longitude    numeric(7,4) NOT NULL CHECK (longitude BETWEEN -180 AND 180),
  elevation_m  integer NOT NULL,
  bortle_class smallint NOT NULL CHECK (bortle_class BETWEEN 1 AND 9),
  opened_on    date NOT NULL
);
COMMENT ON TABLE demo.sites IS 'Observatory sites of the network. One site hosts several telescopes.';
COMMENT ON COLUMN demo.sites.name IS 'Site name, unique across the network.';
COMMENT ON COLUMN demo.sites.country IS 'Country the site is in (English name).';
COMMENT ON COLUMN demo.sites.latitude IS 'Geographic latitude in degrees, north positive.';
COMMENT ON COLUMN demo.sites.longitude IS 'Geographic longitude in degrees, east positive.';
COMMENT ON COLUMN demo.sites.elevation_m IS 'Elevation above sea level in metres.';
COMMENT ON COLUMN demo.sites.bortle_class IS 'Sky darkness on the Bortle scale: 1 = pristine dark sky, 9 = inner city.';
COMMENT ON COLUMN demo.sites.opened_on IS 'Date the site started regular observing.';

INSERT INTO demo.sites (name, country, latitude, longitude, elevation_m, bortle_class, opened_on) VALUES
  ('Cerro Lumbre Station',   'Chile',         -30.2451,  -70.7372, 2380, 1, '2009-03-14'),
  ('Roque del Viento',       'Spain',          28.7569,  -17.8850, 2310, 2, '2011-06-01'),
  ('Kaimana Ridge',          'United States',  19.8230, -155.4700, 3050, 1, '2014-09-22'),
  ('Siding Gap Outpost',     'Australia',     -31.2733,  149.0644, 1150, 2, '2012-11-05'),
  ('Karoo Flats',            'South Africa',  -32.3794,   20.8117, 1790, 2, '2016-04-18'),
  ('Pic Blanc Annex',        'France',         42.9364,    0.1428, 2860, 3, '2013-07-30'),
  ('Lindenberg Hill',        'Germany',        51.5210,   10.2030,  420, 5, '2008-10-10'),
  ('Tekapo Terrace',         'New Zealand',   -43.9856,  170.4650, 1030, 2, '2018-02-12');

CREATE TABLE demo.telescopes (
  id              smallint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  site_id         smallint NOT NULL REFERENCES demo.sites (id),
  name            text NOT NULL UNIQUE,
  design          text NOT NULL CHECK (design IN ('reflector', 'refractor', 'catadioptric')),
  aperture_mm     integer NOT NULL CHECK (aperture_mm > 0),
  focal_ratio     numeric(4,1) NOT NULL CHECK (focal_ratio > 0),
  mount           text NOT NULL CHECK (mount IN ('equatorial', 'alt-azimuth', 'fork')),
  commissioned_on date NOT NULL,
  is_operational  boolean NOT NULL DEFAULT true
);
COMMENT ON TABLE demo.telescopes IS 'Telescopes of the network; each belongs to one site.';
COMMENT ON COLUMN demo.telescopes.site_id IS 'Site where the telescope is installed.';
COMMENT ON COLUMN demo.telescopes.name IS 'Telescope name, unique across the network.';
COMMENT ON COLUMN demo.telescopes.design IS 'Optical design: reflector (mirror), refractor (lens) or catadioptric (both).';
COMMENT ON COLUMN demo.telescopes.aperture_mm IS 'Diameter of the main mirror or lens in millimetres; larger collects more light.';
COMMENT ON COLUMN demo.telescopes.focal_ratio IS 'Focal length divided by aperture (the f-number).';
COMMENT ON COLUMN demo.telescopes.mount IS 'How the telescope tracks the sky.';
COMMENT ON COLUMN demo.telescopes.commissioned_on IS 'Date of first light.';
COMMENT ON COLUMN demo.telescopes.is_operational IS 'False while the telescope is out of service.';

INSERT INTO demo.telescopes (site_id, name, design, aperture_mm, focal_ratio, mount, commissioned_on, is_operational)
SELECT s.id,
       s.name || ' ' || (ARRAY['Alpha', 'Beta', 'Gamma'])[k],
       (ARRAY['reflector', 'refractor', 'catadioptric'])[1 + (s.id + k) % 3],
       (ARRAY[1000, 600, 400, 355, 280, 150, 800, 203])[1 + (s.id * 3 + k) % 8],
       (ARRAY[3.0, 4.0, 5.0, 7.0, 8.0, 10.0])[1 + (s.id + 2 * k) % 6],
       (ARRAY['equatorial', 'alt-azimuth', 'fork'])[1 + (s.id * k) % 3],
       s.opened_on + (k * 120 + (s.id * 17) % 90),
       NOT (s.id = 7 AND k = 3)
FROM demo.sites s CROSS JOIN generate_series(1, 3) AS k
ORDER BY s.id, k;

CREATE INDEX ON demo.telescopes (site_id);

------------------------------------------------------------------------------------------
-- Observers
------------------------------------------------------------------------------------------

CREATE TABLE demo.observers (
  id           integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  full_name    text NOT NULL,
  email        text NOT NULL UNIQUE,
  affiliation  text NOT NULL,
  home_site_id smallint NOT NULL REFERENCES demo.sites (id),
  joined_on    date NOT NULL,
  is_active    boolean NOT NULL DEFAULT true
);
COMMENT ON TABLE demo.observers IS 'Members of the network who book telescope time and log observations.';
COMMENT ON COLUMN demo.observers.full_name IS 'Display name.';
COMMENT ON COLUMN demo.observers.email IS 'Contact address (fictional, example.org).';
COMMENT ON COLUMN demo.observers.affiliation IS 'University, club or institute the observer belongs to.';
COMMENT ON COLUMN demo.observers.home_site_id IS 'Site the observer usually works from.';
COMMENT ON COLUMN demo.observers.joined_on IS 'Date the observer joined the network.';
COMMENT ON COLUMN demo.observers.is_active IS 'False for members who no longer observe.';

INSERT INTO demo.observers (full_name, email, affiliation, home_site_id, joined_on, is_active)
SELECT first_name || ' ' || last_name,
       translate(lower(first_name || '.' || last_name || g), 'áéíóú', 'aeiou') || '@example.org',
       (ARRAY['Valparaíso Amateur Astronomers', 'Instituto de Cielo Oscuro', 'Hilo Stargazers Club',
              'University of New England Physics', 'Karoo Sky Society', 'Observatoire du Midi',
              'Harz Volkssternwarte', 'Canterbury Astronomical Society', 'Independent'])[1 + g % 9],
       1 + (g * 7) % 8,
       date '2015-01-01' + (pg_temp.unit(g * 11) * 3500)::integer,
       pg_temp.unit(g * 13) > 0.12
FROM generate_series(1, 150) AS g,
LATERAL (SELECT (ARRAY['Ana', 'Bruno', 'Chiara', 'Dmitri', 'Elena', 'Farid', 'Grace', 'Hiroshi', 'Ines',
                       'Jonas', 'Keala', 'Lucía', 'Mateo', 'Nomvula', 'Olga', 'Pedro', 'Quinn', 'Rangi',
                       'Sofia', 'Tomás'])[1 + g % 20] AS first_name,
                (ARRAY['Acosta', 'Becker', 'Castillo', 'Dlamini', 'Evans', 'Fischer', 'García', 'Hale',
                       'Ivanova', 'Kahananui', 'Laurent', 'Moreno', 'Nakamura', 'Okafor', 'Petrov',
                       'Quispe', 'Rossi', 'Silva', 'Tane', 'Underwood'])[1 + (g * 7 + g / 20) % 20] AS last_name) AS n
ORDER BY g;

CREATE INDEX ON demo.observers (home_site_id);

------------------------------------------------------------------------------------------
-- Catalogue of celestial objects, with a vector column for similarity search
------------------------------------------------------------------------------------------

CREATE TABLE demo.celestial_objects (
  id                 integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  designation        text NOT NULL UNIQUE,
  common_name        text,
  kind               demo.object_kind NOT NULL,
  ra_deg             numeric(8,4) NOT NULL CHECK (ra_deg >= 0 AND ra_deg < 360),
  dec_deg            numeric(7,4) NOT NULL CHECK (dec_deg BETWEEN -90 AND 90),
  apparent_magnitude numeric(5,2) NOT NULL,
  distance_ly        double precision,
  spectral_signature vector(8) NOT NULL
);
COMMENT ON TABLE demo.celestial_objects IS 'Catalogue of stars, clusters, nebulae and galaxies the network observes. The first rows are well-known objects (approximate positions); the rest are catalogue entries.';
COMMENT ON COLUMN demo.celestial_objects.designation IS 'Catalogue designation, unique (Messier number or network catalogue id).';
COMMENT ON COLUMN demo.celestial_objects.common_name IS 'Popular name, when the object has one.';
COMMENT ON COLUMN demo.celestial_objects.kind IS 'Broad class of the object.';
COMMENT ON COLUMN demo.celestial_objects.ra_deg IS 'Right ascension (J2000) in degrees, 0 to 360.';
COMMENT ON COLUMN demo.celestial_objects.dec_deg IS 'Declination (J2000) in degrees, -90 to +90.';
COMMENT ON COLUMN demo.celestial_objects.apparent_magnitude IS 'Visual brightness as seen from Earth; smaller is brighter, about 6 is the naked-eye limit.';
COMMENT ON COLUMN demo.celestial_objects.distance_ly IS 'Distance in light years, when known.';
COMMENT ON COLUMN demo.celestial_objects.spectral_signature IS 'Relative flux in eight broad bands from ultraviolet to far infrared (largest band = 1). Similar objects have nearby vectors: ORDER BY spectral_signature <-> ''[…]''.';

INSERT INTO demo.celestial_objects (designation, common_name, kind, ra_deg, dec_deg, apparent_magnitude, distance_ly, spectral_signature)
SELECT designation, common_name, kind::demo.object_kind, ra, dec, mag, dist, sig::vector(8)
FROM (VALUES
  ('HR 2491',  'Sirius',                 'double_star',   101.2872, -16.7161, -1.46,        8.6, '[0.92,1,0.95,0.72,0.5,0.33,0.2,0.11]'),
  ('HR 7001',  'Vega',                   'star',          279.2347,  38.7837,  0.03,         25, '[0.88,1,0.93,0.7,0.48,0.31,0.19,0.1]'),
  ('HR 2061',  'Betelgeuse',             'variable_star',  88.7929,   7.4071,  0.50,        548, '[0.02,0.06,0.18,0.45,0.8,1,0.86,0.62]'),
  ('HR 424',   'Polaris',                'variable_star',  37.9546,  89.2641,  1.98,        433, '[0.35,0.62,0.88,1,0.86,0.64,0.43,0.27]'),
  ('HR 5340',  'Arcturus',               'star',          213.9153,  19.1824, -0.05,       36.7, '[0.06,0.17,0.42,0.76,1,0.93,0.7,0.46]'),
  ('HR 1713',  'Rigel',                  'star',           78.6345,  -8.2016,  0.13,        860, '[1,0.9,0.7,0.48,0.31,0.19,0.11,0.06]'),
  ('HR 6134',  'Antares',                'double_star',   247.3519, -26.4320,  1.06,        550, '[0.03,0.08,0.22,0.52,0.86,1,0.83,0.58]'),
  ('HR 1457',  'Aldebaran',              'star',           68.9802,  16.5093,  0.86,         65, '[0.05,0.14,0.37,0.71,1,0.95,0.73,0.49]'),
  ('M31',      'Andromeda Galaxy',       'galaxy',         10.6847,  41.2690,  3.44,    2537000, '[0.3,0.52,0.78,0.97,1,0.93,0.81,0.66]'),
  ('M42',      'Orion Nebula',           'nebula',         83.8221,  -5.3911,  4.00,       1344, '[0.42,0.55,0.61,1,0.38,0.3,0.52,0.71]'),
  ('M45',      'Pleiades',               'star_cluster',   56.7500,  24.1167,  1.60,        444, '[0.95,1,0.9,0.66,0.45,0.29,0.17,0.1]'),
  ('M1',       'Crab Nebula',            'nebula',         83.6331,  22.0145,  8.40,       6500, '[0.61,0.58,0.55,0.93,0.49,0.52,0.6,1]'),
  ('M51',      'Whirlpool Galaxy',       'galaxy',        202.4696,  47.1952,  8.40,   23000000, '[0.38,0.58,0.8,0.96,1,0.9,0.77,0.62]'),
  ('M57',      'Ring Nebula',            'nebula',        283.3963,  33.0292,  8.80,       2570, '[0.5,0.62,1,0.85,0.35,0.27,0.4,0.55]'),
  ('M13',      'Great Hercules Cluster', 'star_cluster',  250.4235,  36.4613,  5.80,      22200, '[0.22,0.45,0.78,1,0.94,0.76,0.55,0.36]'),
  ('NGC 5139', 'Omega Centauri',         'star_cluster',  201.6970, -47.4795,  3.90,      17090, '[0.2,0.43,0.77,1,0.95,0.78,0.57,0.38]'),
  ('M104',     'Sombrero Galaxy',        'galaxy',        189.9976, -11.6231,  8.00,   31100000, '[0.27,0.49,0.76,0.95,1,0.94,0.83,0.69]'),
  ('M8',       'Lagoon Nebula',          'nebula',        270.9042, -24.3867,  6.00,       4100, '[0.45,0.5,0.58,1,0.4,0.32,0.48,0.66]'),
  ('M16',      'Eagle Nebula',           'nebula',        274.7000, -13.8067,  6.00,       7000, '[0.4,0.47,0.6,1,0.42,0.35,0.55,0.75]'),
  ('LMC',      'Large Magellanic Cloud', 'galaxy',         80.8938, -69.7561,  0.90,     163000, '[0.45,0.68,0.9,1,0.92,0.8,0.64,0.5]')
) AS famous (designation, common_name, kind, ra, dec, mag, dist, sig);

-- Catalogue entries. Each kind has a typical spectral profile; every object varies it by up to
-- ±15 % per band, then is rescaled so its strongest band is 1. Declinations are spread evenly
-- over the sphere (asin of a uniform value).
WITH profile (kind, bands) AS (VALUES
  ('star',          ARRAY[0.55, 0.8, 1.0, 0.9, 0.7, 0.5, 0.33, 0.2]),
  ('variable_star', ARRAY[0.08, 0.2, 0.45, 0.8, 1.0, 0.9, 0.7, 0.5]),
  ('double_star',   ARRAY[0.7, 0.95, 1.0, 0.8, 0.6, 0.42, 0.28, 0.17]),
  ('star_cluster',  ARRAY[0.3, 0.55, 0.85, 1.0, 0.9, 0.72, 0.52, 0.35]),
  ('nebula',        ARRAY[0.45, 0.5, 0.6, 1.0, 0.4, 0.33, 0.5, 0.7]),
  ('galaxy',        ARRAY[0.32, 0.55, 0.8, 0.96, 1.0, 0.92, 0.79, 0.64])
),
generated AS (
  SELECT g,
         (ARRAY['star', 'star', 'star', 'variable_star', 'double_star', 'double_star',
                'star_cluster', 'nebula', 'galaxy', 'galaxy'])[1 + (hashint4(g * 3) & 2147483647) % 10] AS kind
  FROM generate_series(21, 1600) AS g
)
INSERT INTO demo.celestial_objects (designation, common_name, kind, ra_deg, dec_deg, apparent_magnitude, distance_ly, spectral_signature)
SELECT 'CLR ' || lpad(g::text, 5, '0'),
       NULL,
       gen.kind::demo.object_kind,
       round((pg_temp.unit(g * 5) * 359.9999)::numeric, 4),
       round(degrees(asin(2 * pg_temp.unit(g * 7) - 1))::numeric, 4),
       round((3.5 + pg_temp.unit(g * 11) * 11)::numeric, 2),
       CASE WHEN pg_temp.unit(g * 17) < 0.08 THEN NULL
            WHEN gen.kind = 'galaxy' THEN round(2e6 + pg_temp.unit(g * 19) * 9.8e7)
            WHEN gen.kind IN ('nebula', 'star_cluster') THEN round(500 + pg_temp.unit(g * 19) * 30000)
            ELSE round(4 + pg_temp.unit(g * 19) * 2500) END,
       (SELECT array_agg(round((raw / peak)::numeric, 3) ORDER BY b)::real[]::vector(8)
          FROM (SELECT b, raw, max(raw) OVER () AS peak
                  FROM generate_series(1, 8) AS b,
                       LATERAL (SELECT p.bands[b] * (0.85 + 0.3 * pg_temp.unit(g * 8 + b)) AS raw) AS r) AS bands)
FROM generated AS gen JOIN profile AS p USING (kind)
ORDER BY g;

CREATE INDEX celestial_objects_kind_idx ON demo.celestial_objects (kind);
CREATE INDEX celestial_objects_signature_idx ON demo.celestial_objects USING hnsw (spectral_signature vector_l2_ops);
COMMENT ON INDEX demo.celestial_objects_signature_idx IS 'HNSW index for nearest-neighbour search on spectral signatures (Euclidean distance, operator <->).';

------------------------------------------------------------------------------------------
-- Observing sessions and observations (two years, 2024-2025)
------------------------------------------------------------------------------------------

CREATE TABLE demo.observing_sessions (
  id              integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  telescope_id    smallint NOT NULL REFERENCES demo.telescopes (id),
  observer_id     integer NOT NULL REFERENCES demo.observers (id),
  starts_at       timestamptz NOT NULL,
  ends_at         timestamptz NOT NULL,
  seeing_arcsec   numeric(3,1) NOT NULL CHECK (seeing_arcsec > 0),
  cloud_cover_pct smallint NOT NULL CHECK (cloud_cover_pct BETWEEN 0 AND 100),
  notes           text,
  CHECK (ends_at > starts_at)
);
COMMENT ON TABLE demo.observing_sessions IS 'One observer at one telescope for one night.';
COMMENT ON COLUMN demo.observing_sessions.telescope_id IS 'Telescope used.';
COMMENT ON COLUMN demo.observing_sessions.observer_id IS 'Observer who booked and ran the session.';
COMMENT ON COLUMN demo.observing_sessions.starts_at IS 'Start of the session (UTC).';
COMMENT ON COLUMN demo.observing_sessions.ends_at IS 'End of the session (UTC).';
COMMENT ON COLUMN demo.observing_sessions.seeing_arcsec IS 'Atmospheric seeing in arcseconds; smaller means a steadier sky.';
COMMENT ON COLUMN demo.observing_sessions.cloud_cover_pct IS 'Average cloud cover during the session, in percent.';
COMMENT ON COLUMN demo.observing_sessions.notes IS 'Free-text remarks by the observer.';

INSERT INTO demo.observing_sessions (telescope_id, observer_id, starts_at, ends_at, seeing_arcsec, cloud_cover_pct, notes)
SELECT 1 + (hashint4(g * 23) & 2147483647) % 24,
       1 + (hashint4(g * 29) & 2147483647) % 150,
       start_at,
       start_at + make_interval(mins => 60 + (pg_temp.unit(g * 31) * 420)::integer),
       round((0.6 + pg_temp.unit(g * 37) ^ 2 * 3.4)::numeric, 1),
       (pg_temp.unit(g * 41) ^ 3 * 100)::integer,
       (ARRAY[NULL, NULL, NULL, 'Dew on the corrector plate after midnight.', 'Excellent transparency.',
              'Wind gusts, some trailed frames.', 'Moon close to the targets.', 'Guiding lost twice.',
              'Calibration frames taken at dusk.', NULL])[1 + g % 10]
FROM generate_series(1, 1200) AS g,
LATERAL (SELECT timestamptz '2024-01-01 18:00:00+00' + make_interval(days => (g - 1) * 730 / 1200)
                + make_interval(mins => (pg_temp.unit(g * 43) * 300)::integer) AS start_at) AS t
ORDER BY g;

CREATE INDEX ON demo.observing_sessions (telescope_id);
CREATE INDEX ON demo.observing_sessions (observer_id);
CREATE INDEX ON demo.observing_sessions (starts_at);

CREATE TABLE demo.observations (
  id                 bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  session_id         integer NOT NULL REFERENCES demo.observing_sessions (id) ON DELETE CASCADE,
  object_id          integer NOT NULL REFERENCES demo.celestial_objects (id),
  observed_at        timestamptz NOT NULL,
  filter_band        char(1) NOT NULL CHECK (filter_band IN ('U', 'B', 'V', 'R', 'I')),
  exposure_s         numeric(6,1) NOT NULL CHECK (exposure_s > 0),
  measured_magnitude numeric(5,2) NOT NULL,
  quality            smallint NOT NULL CHECK (quality BETWEEN 1 AND 5),
  flagged            boolean NOT NULL DEFAULT false
);
COMMENT ON TABLE demo.observations IS 'One photometric measurement of one object, in one filter, during one session.';
COMMENT ON COLUMN demo.observations.session_id IS 'Session the measurement was taken in.';
COMMENT ON COLUMN demo.observations.object_id IS 'Object measured.';
COMMENT ON COLUMN demo.observations.observed_at IS 'Mid-exposure time (UTC).';
COMMENT ON COLUMN demo.observations.filter_band IS 'Photometric filter: U (ultraviolet), B (blue), V (visual), R (red) or I (near infrared).';
COMMENT ON COLUMN demo.observations.exposure_s IS 'Exposure time in seconds.';
COMMENT ON COLUMN demo.observations.measured_magnitude IS 'Brightness measured in this filter; compare with celestial_objects.apparent_magnitude.';
COMMENT ON COLUMN demo.observations.quality IS 'Observer''s rating of the measurement, 1 (poor) to 5 (excellent).';
COMMENT ON COLUMN demo.observations.flagged IS 'True when the measurement was marked for review (clouds, satellite trail, bad guiding).';

-- Bright, named objects are observed far more often than faint catalogue entries.
INSERT INTO demo.observations (session_id, object_id, observed_at, filter_band, exposure_s, measured_magnitude, quality, flagged)
SELECT s.id,
       o.id,
       s.starts_at + (s.ends_at - s.starts_at) * pg_temp.unit(g * 53),
       band,
       round((1 + greatest(o.apparent_magnitude, 0) ^ 2 * 2 * (0.5 + pg_temp.unit(g * 59)))::numeric, 1),
       o.apparent_magnitude + CASE band WHEN 'U' THEN 0.6 WHEN 'B' THEN 0.3 WHEN 'V' THEN 0 WHEN 'R' THEN -0.2 ELSE -0.4 END
         + round(((pg_temp.unit(g * 61) - 0.5) * 0.2 * (1 + s.seeing_arcsec / 2))::numeric, 2),
       greatest(1, least(5, 5 - floor(s.cloud_cover_pct / 30.0) - floor(s.seeing_arcsec / 2.0)
                         + (pg_temp.unit(g * 67) > 0.7)::integer))::smallint,
       s.cloud_cover_pct > 60 AND pg_temp.unit(g * 71) < 0.5
FROM generate_series(1, 7000) AS g
JOIN demo.observing_sessions AS s ON s.id = 1 + (g - 1) % 1200
JOIN demo.celestial_objects AS o ON o.id = 1 + floor(pg_temp.unit(g * 47) ^ 2.5 * 1600)::integer,
LATERAL (SELECT (ARRAY['U', 'B', 'V', 'V', 'V', 'R', 'R', 'I'])[1 + (hashint4(g * 73) & 2147483647) % 8] AS band) AS f
ORDER BY g;

CREATE INDEX ON demo.observations (session_id);
CREATE INDEX ON demo.observations (object_id, observed_at);

------------------------------------------------------------------------------------------
-- Views
------------------------------------------------------------------------------------------

CREATE VIEW demo.observation_log AS
SELECT ob.id AS observation_id,
       ob.observed_at,
       co.designation,
       co.common_name,
       co.kind,
       ob.filter_band,
       ob.measured_magnitude,
       ob.quality,
       ob.flagged,
       o.full_name AS observer,
       t.name AS telescope,
       si.name AS site
FROM demo.observations ob
JOIN demo.celestial_objects co ON co.id = ob.object_id
JOIN demo.observing_sessions se ON se.id = ob.session_id
JOIN demo.observers o ON o.id = se.observer_id
JOIN demo.telescopes t ON t.id = se.telescope_id
JOIN demo.sites si ON si.id = t.site_id;
COMMENT ON VIEW demo.observation_log IS 'Every observation with the names of its object, observer, telescope and site: the easiest starting point for questions about who observed what, where and when.';

CREATE VIEW demo.object_statistics AS
SELECT co.id AS object_id,
       co.designation,
       co.common_name,
       co.kind,
       co.apparent_magnitude,
       count(ob.id) AS observation_count,
       count(DISTINCT se.observer_id) AS observer_count,
       min(ob.observed_at) AS first_observed_at,
       max(ob.observed_at) AS last_observed_at,
       round(avg(ob.measured_magnitude) FILTER (WHERE ob.filter_band = 'V'), 2) AS mean_v_magnitude
FROM demo.celestial_objects co
LEFT JOIN demo.observations ob ON ob.object_id = co.id
LEFT JOIN demo.observing_sessions se ON se.id = ob.session_id
GROUP BY co.id;
COMMENT ON VIEW demo.object_statistics IS 'Per object: how often and by how many observers it was observed, first and last observation, mean magnitude in the V filter.';

------------------------------------------------------------------------------------------
-- Functions
------------------------------------------------------------------------------------------

CREATE FUNCTION demo.angular_distance_deg(ra1 double precision, dec1 double precision,
                                          ra2 double precision, dec2 double precision)
RETURNS double precision
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$
  -- Haversine formula: stays accurate for the small separations observers care about.
  SELECT 2 * asind(least(1, sqrt(sind((dec2 - dec1) / 2) ^ 2
                                 + cosd(dec1) * cosd(dec2) * sind((ra2 - ra1) / 2) ^ 2)))
$$;
COMMENT ON FUNCTION demo.angular_distance_deg(double precision, double precision, double precision, double precision)
  IS 'Angular separation in degrees between two sky positions given as right ascension and declination in degrees.';

CREATE FUNCTION demo.objects_near(center_ra double precision, center_dec double precision,
                                  radius_deg double precision DEFAULT 5)
RETURNS TABLE (object_id integer, designation text, common_name text, kind demo.object_kind,
               apparent_magnitude numeric, separation_deg double precision)
LANGUAGE sql STABLE
AS $$
  SELECT o.id, o.designation, o.common_name, o.kind, o.apparent_magnitude, sep.deg
  FROM demo.celestial_objects AS o,
       LATERAL (SELECT demo.angular_distance_deg(center_ra, center_dec, o.ra_deg::double precision,
                                                 o.dec_deg::double precision) AS deg) AS sep
  WHERE sep.deg <= radius_deg
  ORDER BY sep.deg, o.id
$$;
COMMENT ON FUNCTION demo.objects_near(double precision, double precision, double precision)
  IS 'Catalogued objects within radius_deg degrees (default 5) of a sky position, nearest first.';

ANALYZE demo.sites, demo.telescopes, demo.observers, demo.celestial_objects,
        demo.observing_sessions, demo.observations;

DROP FUNCTION pg_temp.unit(integer);
