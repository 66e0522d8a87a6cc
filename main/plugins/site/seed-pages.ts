import type { SeedPage } from './seed-page.ts';
import type { SiteSettings } from './site-data.ts';
import { SEED_POSTS } from './seed-posts.ts';

/**
 * The sample site written on first run: a small coffee roaster, so every
 * tool has something real to work on. Pages reference each other by id (the
 * seed writes them as ids 1..8 in this order) and link with /slug/ paths.
 */

export const SEED_SITE: SiteSettings = {
  name: 'Northbank Coffee Roasters',
  description: 'Small-batch specialty coffee, roasted in Bristol and posted within 48 hours.',
  url: 'https://northbank-coffee.example/',
  language: 'en',
  timezone: 'Europe/London',
};

const home: SeedPage = {
  slug: 'home',
  title: 'Home',
  status: 'publish',
  language: 'en',
  excerpt: 'Small-batch specialty coffee roasted in Bristol every Tuesday and Friday, posted within 48 hours.',
  seo_title: 'Northbank Coffee Roasters | Specialty Coffee Roasted in Bristol',
  seo_description:
    'Small-batch specialty coffee roasted in Bristol twice a week and posted within 48 hours. Single origins, espresso blends, decaf and wholesale.',
  focus_keyword: 'specialty coffee',
  translations: {},
  age_days: 40,
  content: `# Small-batch coffee, roasted in Bristol

Northbank Coffee Roasters roasts **specialty coffee** in small batches every Tuesday and Friday, a short walk from the harbourside. We buy green coffee from farms we know by name, roast it to bring out what makes each lot different, and post it within 48 hours of roasting.

## Fresh specialty coffee, delivered

Every bag carries its roast date. Order by Sunday evening and your coffee is roasted and on its way by Tuesday. Browse [our coffees](/coffees/) to find single origins, the house espresso blend and a decaf that does not taste like one.

## For cafés and offices

We supply independent cafés, restaurants and offices across the South West with [wholesale coffee](/wholesale/), barista training and help with equipment.

## Learn to brew better coffee

New to filter coffee? Start with our [pour-over brewing guide](/pour-over-brewing-guide/), or read [what really changes between light and dark roasts](/light-vs-dark-roast/).

## Visit the roastery

The roastery shop at 14 Wapping Wharf is open Wednesday to Saturday, 9am to 4pm. Come in for a free tasting, or [read how we started](/about-us/).
`,
};

const about: SeedPage = {
  slug: 'about-us',
  title: 'About us',
  status: 'publish',
  language: 'en',
  excerpt: 'Two friends, one second-hand roaster and a railway arch: how Northbank started in 2016.',
  seo_title: 'About Northbank Coffee Roasters',
  seo_description: '',
  focus_keyword: 'coffee roasters bristol',
  translations: { de: 8 },
  age_days: 120,
  content: `# About us

Northbank started in 2016 with two friends, a second-hand five-kilo roaster and a railway arch that flooded every winter. Today we are a team of seven and still roast every batch by hand.

## What we believe

Good coffee is grown by people who are paid fairly for it. We buy most of our green coffee directly, pay well above the Fairtrade minimum and publish the price we paid for every lot on its bag.

We roast light enough to taste where a coffee comes from, but never so light that it turns sour. If a coffee does not taste good as an espresso and as a filter, it does not go on the shelf.

## The team

- **Maya Okafor**, head roaster, cupped her first coffee in Kampala and has judged national barista competitions.
- **Tom Hale**, co-founder, looks after our café partners and fixes every grinder in Bristol.
- **Lena Brandt**, runs the roastery shop and our tasting sessions.

## Where to find us

Visit the roastery at 14 Wapping Wharf, browse [our coffees](/coffees/) online, or ask about [wholesale](/wholesale/) for your café.
`,
};

const coffees: SeedPage = {
  slug: 'coffees',
  title: 'Our coffees',
  status: 'publish',
  language: 'en',
  excerpt: 'Single-origin filter coffees, the Harbour espresso blend and a Swiss Water decaf, roasted to order.',
  seo_title: 'Buy Fresh Roasted Coffee Beans Online | Northbank Coffee',
  seo_description:
    'Freshly roasted coffee beans from Ethiopia, Colombia and Guatemala, our Harbour espresso blend and a Swiss Water decaf. Roasted to order in Bristol.',
  focus_keyword: 'fresh roasted coffee beans',
  translations: {},
  age_days: 12,
  content: `# Our coffees

All of our coffees are roasted to order and shipped within 48 hours. Choose whole beans or tell us how you brew and we will grind for you. Fresh roasted coffee beans taste best between one and four weeks after the roast date.

## Single origins

### Ethiopia Guji, washed

Bright and floral, with jasmine, peach and black tea. Our favourite for pour-over. From £11 for 250 g.

### Colombia Huila, honey process

Sweet and round: red apple, panela and milk chocolate. Works as filter and espresso. From £10 for 250 g.

### Guatemala Huehuetenango

Cocoa, toasted almond and a soft orange acidity. From £10 for 250 g.

## Harbour espresso blend

Our house espresso: Brazilian and Colombian coffees roasted a little darker for body and caramel sweetness that cuts through milk. From £9.50 for 250 g.

## Swiss Water decaf

A Colombian decaf processed with water only, no chemical solvents. Chocolate and hazelnut; nobody at our tastings guesses it is decaf. From £10 for 250 g.

## Brewing help

Not sure which coffee suits your brewer? Read the [pour-over brewing guide](/pour-over-brewing-guide/) or ask us at the roastery.
`,
};

const wholesale: SeedPage = {
  slug: 'wholesale',
  title: 'Wholesale coffee for cafés and offices',
  status: 'publish',
  language: 'en',
  excerpt:
    'Wholesale coffee, barista training and equipment support for cafés, restaurants and offices in the South West.',
  seo_title: 'Wholesale Coffee Supplier in Bristol for Cafés and Offices',
  seo_description:
    'Wholesale specialty coffee for cafés, restaurants and offices in Bristol and the South West, with barista training, equipment support and weekly delivery.',
  focus_keyword: 'wholesale coffee',
  translations: {},
  age_days: 60,
  content: `# Wholesale coffee for cafés and offices

We roast wholesale coffee for over forty independent cafés, restaurants and offices in Bristol, Bath and across the South West. Every partner gets coffee roasted in the same week it is delivered.

## What partners get

- Weekly delivery in our own van within 30 miles of Bristol, by courier further afield.
- Free barista training at our roastery for your whole team, twice a year.
- Help choosing, installing and servicing espresso machines and grinders.
- A menu of seasonal single origins alongside the Harbour espresso blend.

## Wholesale coffee for offices

For offices we offer filter and bean-to-cup setups with a monthly subscription, so your team never runs out. We will recommend equipment that suits the number of people and the space you have.

## Get in touch

Tell us about your café or office at wholesale@northbank-coffee.example and we will bring samples to you. You can also taste [our current coffees](/coffees/) at the roastery first.
`,
};

const ueberUns: SeedPage = {
  slug: 'ueber-uns',
  title: 'Über uns',
  status: 'publish',
  language: 'de',
  excerpt: 'Zwei Freunde, ein gebrauchter Röster und ein Eisenbahnbogen: wie Northbank 2016 begann.',
  seo_title: 'Über Northbank Coffee Roasters – Kaffeerösterei in Bristol',
  seo_description:
    'Northbank ist eine kleine Kaffeerösterei in Bristol. Wir kaufen Rohkaffee direkt bei den Farmen, zahlen faire Preise und rösten jede Charge von Hand.',
  focus_keyword: 'kaffeerösterei bristol',
  translations: { en: 2 },
  age_days: 100,
  content: `# Über uns

Northbank begann 2016 mit zwei Freunden, einem gebrauchten Fünf-Kilo-Röster und einem Eisenbahnbogen, der jeden Winter unter Wasser stand. Heute sind wir ein Team von sieben Leuten und rösten noch immer jede Charge von Hand.

## Woran wir glauben

Guter Kaffee wird von Menschen angebaut, die fair dafür bezahlt werden. Wir kaufen den größten Teil unseres Rohkaffees direkt, zahlen deutlich mehr als den Fairtrade-Mindestpreis und drucken den Preis jeder Partie auf die Tüte.

Wir rösten hell genug, um die Herkunft zu schmecken, aber nie so hell, dass der Kaffee sauer wird. Was als Espresso und als Filterkaffee nicht schmeckt, kommt nicht ins Regal.

## Das Team

- **Maya Okafor**, Chefrösterin, hat ihren ersten Kaffee in Kampala verkostet.
- **Tom Hale**, Mitgründer, betreut unsere Cafés und repariert jede Mühle in Bristol.
- **Lena Brandt**, leitet den Laden in der Rösterei und unsere Verkostungen.

## So finden Sie uns

Besuchen Sie die Rösterei in 14 Wapping Wharf oder sehen Sie sich [unsere Kaffees](/coffees/) an (auf Englisch).
`,
};

/** In id order: 1 home, 2 about, 3 coffees, 4 wholesale, 5-6 blog posts, 7 draft, 8 German about. */
export const SEED_PAGES: readonly SeedPage[] = [home, about, coffees, wholesale, ...SEED_POSTS, ueberUns];
