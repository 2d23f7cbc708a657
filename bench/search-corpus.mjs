// The retrieval set of `npm run bench:search`, made for this project and generated here
// (deterministic: a seeded PRNG, no network). Observers' maintenance and observing reports:
// each document is about one INSTRUMENT (a rare code such as "KX-417", plus its model name)
// and one PROBLEM (a short phrase), padded with common observatory vocabulary.
//
// Queries come in three kinds, so that the keyword match and the vector match disagree:
//   code     - the instrument code among several common words ("night report telescope KX-417
//              log"): BM25's IDF lets the rare code decide; the offline vectors, which weigh
//              every word alike, drown it in the common ones.
//   typo     - the problem phrase misspelt ("colimation drfit"): full-text search finds no
//              word; character trigrams still match.
//   mixed    - the code plus the misspelt problem: each method finds half of what is needed
//              and only their fusion puts the rows that have both first.
// Relevant rows for a query are the documents generated from its (instrument, problem) pair;
// for a `code` query, the instrument's documents.

export function prng(seed) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const MODELS = [
  'Kestrel',
  'Osprey',
  'Harrier',
  'Merlin',
  'Falcon',
  'Condor',
  'Petrel',
  'Plover',
  'Heron',
  'Egret',
  'Curlew',
  'Avocet',
  'Dunlin',
  'Gannet',
  'Shrike',
  'Tern',
];
const KINDS = [
  'spectrograph',
  'refractor',
  'reflector',
  'photometer',
  'autoguider',
  'focuser',
  'camera',
  'mount',
  'filter wheel',
  'dome controller',
];
const PROBLEMS = [
  ['collimation drift', 'colimation drfit'],
  ['condensation on the corrector', 'condensaton on the corector'],
  ['firmware freeze', 'firmwear freze'],
  ['cooling failure', 'coolling failiure'],
  ['backlash in declination', 'backlsh in declinaton'],
  ['vignetting at the edges', 'vignneting at the edgess'],
  ['stray light reflections', 'stray ligth reflectons'],
  ['tracking oscillation', 'trackng osscillation'],
  ['bias frame banding', 'bias fram bandding'],
  ['encoder slippage', 'encodr slipage'],
  ['shutter sticking', 'shuttr stiking'],
  ['power supply noise', 'powr suply noize'],
];
const COMMON = [
  'night',
  'report',
  'telescope',
  'observation',
  'log',
  'session',
  'data',
  'sky',
  'observer',
  'image',
  'frames',
  'checked',
  'team',
  'measured',
  'evening',
  'calibration',
  'target',
  'weather',
  'clear',
  'seeing',
  'notes',
  'system',
  'issue',
  'status',
];

export const INSTRUMENT_COUNT = 60;

export function instruments() {
  const rand = prng(7);
  return Array.from({ length: INSTRUMENT_COUNT }, (_, i) => {
    const letters = String.fromCharCode(65 + Math.floor(rand() * 26), 65 + Math.floor(rand() * 26));
    return {
      id: i,
      code: `${letters}-${100 + Math.floor(rand() * 900)}`,
      name: `${MODELS[i % MODELS.length]} ${KINDS[Math.floor(i / 6) % KINDS.length]}`,
    };
  });
}

/** `count` documents: { id, instrument, problem, body }. */
export function documents(count, seed = 11) {
  const rand = prng(seed);
  const pick = (list) => list[Math.floor(rand() * list.length)];
  const tools = instruments();
  const docs = [];
  for (let id = 1; id <= count; id++) {
    const instrument = Math.floor(rand() * tools.length);
    const problem = Math.floor(rand() * PROBLEMS.length);
    const t = tools[instrument];
    const filler = () =>
      Array.from({ length: 6 + Math.floor(rand() * 8) }, () => pick(COMMON)).join(' ');
    const parts = [
      `${filler()}.`,
      // The code is mentioned once, the model name sometimes: lexical vectors get little of it.
      `${t.code} ${rand() < 0.5 ? t.name : ''} showed ${PROBLEMS[problem][0]}.`,
      `${filler()}.`,
    ];
    docs.push({ id, instrument, problem, body: parts.join(' ').replace(/\s+/g, ' ') });
  }
  return docs;
}

/** At least 60 queries with their relevant document ids. */
export function queries(docs) {
  const tools = instruments();
  const rand = prng(23);
  const out = [];
  const relevantTo = (instrument, problem) =>
    docs
      .filter((d) => d.instrument === instrument && (problem === null || d.problem === problem))
      .map((d) => d.id);
  for (let q = 0; q < 24; q++) {
    const instrument = Math.floor(rand() * tools.length);
    const common = Array.from({ length: 5 }, () => COMMON[Math.floor(rand() * COMMON.length)]).join(
      ' ',
    );
    out.push({
      kind: 'code',
      text: `${common} ${tools[instrument].code}`,
      relevant: relevantTo(instrument, null),
    });
  }
  for (let q = 0; q < 24; q++) {
    const instrument = Math.floor(rand() * tools.length);
    const problem = Math.floor(rand() * PROBLEMS.length);
    out.push({
      kind: 'typo',
      text: `${tools[instrument].name} ${PROBLEMS[problem][1]}`,
      relevant: relevantTo(instrument, problem),
    });
  }
  for (let q = 0; q < 24; q++) {
    const instrument = Math.floor(rand() * tools.length);
    const problem = Math.floor(rand() * PROBLEMS.length);
    out.push({
      kind: 'mixed',
      text: `${tools[instrument].code} ${PROBLEMS[problem][1]}`,
      relevant: relevantTo(instrument, problem),
    });
  }
  return out.filter((q) => q.relevant.length > 0);
}
