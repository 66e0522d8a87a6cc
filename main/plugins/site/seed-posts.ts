import type { SeedPage } from './seed-page.ts';

/** The sample blog posts and the unpublished draft (seed ids 5, 6 and 7). */

const pourOver: SeedPage = {
  slug: 'pour-over-brewing-guide',
  title: 'How to brew pour-over coffee at home',
  status: 'publish',
  language: 'en',
  excerpt: 'A simple, repeatable pour-over recipe: the ratio, the grind, the water and the four pours.',
  seo_title: 'Pour-Over Coffee: A Simple Recipe for Brewing at Home',
  seo_description:
    'Brew better pour-over coffee at home with one simple recipe: a 1:16 ratio, the right grind size, water just off the boil and four slow, even pours.',
  focus_keyword: 'pour-over coffee',
  translations: {},
  age_days: 25,
  content: `# How to brew pour-over coffee at home

Pour-over coffee is the easiest way to taste what makes a coffee special. You need a dripper, a paper filter, a kettle and a scale, and about four minutes. This guide gives you one recipe that works with almost any dripper, then explains what to change when a cup tastes wrong.

## What you need

- A dripper such as a V60, Kalita Wave or a simple plastic cone.
- Paper filters that fit it.
- A kettle, ideally with a gooseneck spout for a slow, even pour.
- Kitchen scales that show grams.
- 15 g of freshly ground coffee, for example our [Ethiopia Guji](/coffees/).

## The pour-over coffee recipe

Use 15 g of coffee and 250 g of water: a ratio of about 1:16. Heat the water to 94 °C, which is about thirty seconds after the kettle boils.

### Step 1: rinse the filter

Put the filter in the dripper and pour hot water through it. This removes the papery taste and warms the dripper. Throw the rinse water away.

### Step 2: the bloom

Add the ground coffee, start a timer and pour 40 g of water. Fresh coffee releases carbon dioxide and puffs up. Wait 40 seconds so the gas can escape and the water can reach every grain.

### Step 3: the main pours

Pour the rest of the water in three slow pours of 70 g each, in small circles, keeping the level steady. The last drops should drain at around three and a half minutes.

## How to fix a cup that tastes wrong

If the coffee tastes sour or thin, grind a little finer: the water needs more time with the coffee. If it tastes bitter or dry, grind coarser. Change only one thing at a time, and write it down.

Water matters too. Very hard water hides the fruit in a coffee, so try filtered water if your cups taste flat. The Specialty Coffee Association publishes its [water quality standard](https://sca.coffee/research/coffee-standards) if you want to go deeper.

## Which coffee to choose

Lighter roasts shine in a pour-over because the method brings out clarity and acidity. Read [light vs dark roast](/light-vs-dark-roast/) to see why, or pick a washed single origin from [our coffees](/coffees/).
`,
};

const roasts: SeedPage = {
  slug: 'light-vs-dark-roast',
  title: 'Light vs dark roast: what actually changes',
  status: 'publish',
  language: 'en',
  excerpt:
    'Caffeine, acidity, body and bitterness: what the roast level really does to your coffee, and what it does not.',
  seo_title: 'Light vs Dark Roast Coffee: What Really Changes in the Cup',
  seo_description: '',
  focus_keyword: 'light vs dark roast',
  translations: {},
  age_days: 8,
  content: `# Light vs dark roast: what actually changes

Every coffee starts as a green seed that smells of grass. Roasting turns it brown, builds sweetness and aroma, and decides a great deal about how the cup tastes. But some common beliefs about light and dark roasts are simply wrong.

## What happens in the roaster

During the first minutes the beans dry out. Then sugars and amino acids react and the beans turn brown. Around ten minutes in, the beans crack audibly as steam and gas escape: roasters call this first crack. A light roast ends soon after first crack. A dark roast goes on until a second crack, when oils start to rise to the surface.

## Flavour: origin or roast

A light roast keeps the flavours that come from the farm: the fruit of an Ethiopian coffee, the sweetness of a Colombian honey process. The longer a coffee roasts, the more it tastes of the roast itself: dark chocolate, smoke and bitterness. That is why we roast our single origins light and our [Harbour espresso blend](/coffees/) a little darker.

## Does dark roast have more caffeine?

No. Caffeine barely changes during roasting. Dark beans lose more water and are lighter, so if you measure coffee with a scoop, a scoop of light roast holds slightly more caffeine. Weighed in grams, the difference is tiny.

## Acidity and body

Light roasts taste brighter because more of the coffee's natural acids survive. Dark roasts have less acidity and feel heavier, which many people enjoy with milk.

## Which one should you buy?

Brew with a filter or a pour-over? Start light; our [brewing guide](/pour-over-brewing-guide/) shows how. Drink mostly flat whites or cappuccinos? A medium-dark espresso roast will taste sweeter through milk.
`,
};

const subscriptions: SeedPage = {
  slug: 'coffee-subscriptions',
  title: 'Coffee subscriptions',
  status: 'draft',
  language: 'en',
  excerpt: 'Fresh coffee every two or four weeks, with free delivery. Coming this spring.',
  seo_title: '',
  seo_description: '',
  focus_keyword: '',
  translations: {},
  age_days: 2,
  content: `# Coffee subscriptions

From this spring you can get our coffee delivered every two or four weeks, roasted the same week it ships.

## How it will work

Choose a coffee or let our roasters pick a new one each time. Pause, skip or cancel whenever you like. Delivery in the UK is free.

## Prices

TODO: confirm prices with Tom before publishing.
`,
};

export const SEED_POSTS: readonly SeedPage[] = [pourOver, roasts, subscriptions];
