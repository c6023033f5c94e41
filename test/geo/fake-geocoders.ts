/**
 * Local fixture servers for the network geocoders, on 127.0.0.1, replying with the providers'
 * real shapes: Photon `GET /api/?q=&limit=5` → GeoJSON FeatureCollection (properties osm_type,
 * osm_id, osm_key, osm_value, name, country, countrycode, state, type, extent [minLon, maxLat,
 * maxLon, minLat]); Nominatim `GET /search?q=&format=jsonv2&limit=5&polygon_geojson=1` → array
 * with lat/lon and boundingbox [minlat, maxlat, minlon, maxlon] as strings, importance,
 * category, type, display_name and geojson.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export type Mode = 'ok' | 'http500' | 'down';

export interface PhotonFixture {
  name: string;
  lat: number;
  lng: number;
  osm: [string, number];
  key: string;
  value: string;
  type: string;
  country: string;
  countrycode: string;
  state?: string;
  extent?: [number, number, number, number];
}
export interface NominatimFixture {
  name: string;
  lat: number;
  lng: number;
  osm: [string, number];
  category: string;
  type: string;
  display: string;
  importance: number;
  bbox: [number, number, number, number];
  polygon?: number[][][];
  addresstype?: string;
}

/** Real places absent from the offline tables (villages under 1000 people, a few hamlets). */
export const PHOTON_PLACES: Record<string, PhotonFixture[]> = {
  hintertux: [
    {
      name: 'Hintertux',
      lat: 47.1107,
      lng: 11.6797,
      osm: ['N', 240094131],
      key: 'place',
      value: 'village',
      type: 'city',
      country: 'Österreich',
      countrycode: 'AT',
      state: 'Tirol',
      extent: [11.66, 47.12, 11.7, 47.1],
    },
  ],
  oymyakon: [{ name: 'Oymyakon', lat: 63.4608, lng: 142.7858, osm: ['N', 436005711], key: 'place', value: 'village', type: 'city', country: 'Россия', countrycode: 'RU', state: 'Sakha Republic' }],
};

export const NOMINATIM_PLACES: Record<string, NominatimFixture[]> = {
  kinderdijk: [
    {
      name: 'Kinderdijk',
      lat: 51.8845,
      lng: 4.6391,
      osm: ['relation', 1578432],
      category: 'boundary',
      type: 'administrative',
      addresstype: 'village',
      display: 'Kinderdijk, Molenlanden, Zuid-Holland, Nederland',
      importance: 0.42,
      bbox: [51.87, 51.895, 4.62, 4.66],
      polygon: [
        [
          [4.62, 51.87],
          [4.66, 51.87],
          [4.66, 51.895],
          [4.62, 51.895],
          [4.62, 51.87],
        ],
      ],
    },
  ],
  utqiagvik: [
    {
      name: 'Utqiagvik',
      lat: 71.2906,
      lng: -156.7886,
      osm: ['relation', 2643561],
      category: 'boundary',
      type: 'administrative',
      addresstype: 'city',
      display: 'Utqiagvik, North Slope Borough, Alaska, United States',
      importance: 0.55,
      bbox: [71.2, 71.35, -156.95, -156.6],
    },
  ],
};

export interface FakeGeocoders {
  photonUrl: string;
  nominatimUrl: string;
  photonMode: Mode;
  nominatimMode: Mode;
  calls: { photon: string[]; nominatim: Array<{ q: string; at: number; userAgent?: string; query: URLSearchParams }> };
  close(): Promise<void>;
}

function photonBody(q: string) {
  const hits = PHOTON_PLACES[q.trim().toLowerCase()] ?? [];
  return {
    type: 'FeatureCollection',
    features: hits.map((h) => ({
      type: 'Feature',
      geometry: { type: 'Point', coordinates: [h.lng, h.lat] },
      properties: {
        osm_type: h.osm[0],
        osm_id: h.osm[1],
        osm_key: h.key,
        osm_value: h.value,
        type: h.type,
        name: h.name,
        country: h.country,
        countrycode: h.countrycode,
        ...(h.state ? { state: h.state } : {}),
        ...(h.extent ? { extent: h.extent } : {}),
      },
    })),
  };
}

function nominatimBody(q: string) {
  const hits = NOMINATIM_PLACES[q.trim().toLowerCase()] ?? [];
  return hits.map((h, i) => ({
    place_id: 100000 + i,
    licence: 'Data © OpenStreetMap contributors, ODbL 1.0. http://osm.org/copyright',
    osm_type: h.osm[0],
    osm_id: h.osm[1],
    lat: h.lat.toFixed(7),
    lon: h.lng.toFixed(7),
    category: h.category,
    type: h.type,
    place_rank: 16,
    importance: h.importance,
    addresstype: h.addresstype ?? h.type,
    name: h.name,
    display_name: h.display,
    boundingbox: h.bbox.map((x) => x.toFixed(7)),
    geojson: h.polygon ? { type: 'Polygon', coordinates: h.polygon } : { type: 'Point', coordinates: [h.lng, h.lat] },
  }));
}

async function listen(handler: Parameters<typeof createServer>[1]): Promise<{ server: Server; url: string }> {
  const server = createServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

/** A loopback URL nobody listens on (a port we bound, then released). */
export async function closedPortUrl(): Promise<string> {
  const { server, url } = await listen(() => {});
  await new Promise<void>((r) => server.close(() => r()));
  return url;
}

/** Start both fixture servers. Modes can be switched between requests. */
export async function startFakeGeocoders(): Promise<FakeGeocoders> {
  const state: FakeGeocoders = {
    photonUrl: '',
    nominatimUrl: '',
    photonMode: 'ok',
    nominatimMode: 'ok',
    calls: { photon: [], nominatim: [] },
    close: async () => {},
  };
  const photon = await listen((req, res) => {
    const u = new URL(req.url ?? '/', 'http://x');
    if (state.photonMode === 'down') {
      req.socket.destroy();
      return;
    }
    state.calls.photon.push(u.searchParams.get('q') ?? '');
    if (state.photonMode === 'http500') {
      res.writeHead(500, { 'content-type': 'text/plain' });
      res.end('internal error');
      return;
    }
    if (u.pathname !== '/api/' && u.pathname !== '/api') {
      res.writeHead(404);
      res.end();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(photonBody(u.searchParams.get('q') ?? '')));
  });
  const nominatim = await listen((req, res) => {
    const u = new URL(req.url ?? '/', 'http://x');
    if (state.nominatimMode === 'down') {
      req.socket.destroy();
      return;
    }
    state.calls.nominatim.push({ q: u.searchParams.get('q') ?? '', at: Date.now(), userAgent: req.headers['user-agent'], query: u.searchParams });
    if (state.nominatimMode === 'http500') {
      res.writeHead(500, { 'content-type': 'text/plain' });
      res.end('internal error');
      return;
    }
    if (u.pathname !== '/search') {
      res.writeHead(404);
      res.end();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(nominatimBody(u.searchParams.get('q') ?? '')));
  });
  state.photonUrl = photon.url;
  state.nominatimUrl = nominatim.url;
  state.close = async () => {
    await Promise.all(
      [photon.server, nominatim.server].map(
        (s) =>
          new Promise<void>((r) => {
            s.closeAllConnections();
            s.close(() => r());
          }),
      ),
    );
  };
  return state;
}
