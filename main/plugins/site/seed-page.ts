/** One page of the sample site, as the sample data writes it. */
export interface SeedPage {
  slug: string;
  title: string;
  status: 'draft' | 'publish';
  language: string;
  excerpt: string;
  seo_title: string;
  seo_description: string;
  focus_keyword: string;
  /** language -> position (1-based) of the linked page in SEED_PAGES */
  translations: Record<string, number>;
  /** how long before the sample data's time the page was last modified */
  age_days: number;
  content: string;
}
