/** The buyer and shipping destination the UCP tests check out with, in UCP's postal address shape. */
export const ucpDestination = {
  street_address: '1 Rue de la Paix',
  address_locality: 'Paris',
  address_region: 'IDF',
  address_country: 'FR',
  postal_code: '75002',
  first_name: 'Ada',
  last_name: 'Lovelace',
};

export const ucpBuyer = { email: 'ada@example.com', first_name: 'Ada', last_name: 'Lovelace' };
