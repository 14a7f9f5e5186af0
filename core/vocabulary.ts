/**
 * The value lists the API, the database and the platform client share: statuses, privacy levels,
 * business categories. They live here, below all three, so the gateway's schemas name them without
 * importing the database or the upstream client (.dependency-cruiser.cjs).
 */

/**
 * uploading: the file is on its way to storage; processing: stored, being fetched or handed to the
 * shop; available: usable for publishing; failed: the upload did not complete (see failureReason);
 * expired: the URL's lifetime ended, or the record was soft-deleted (deletedAt set).
 */
export const VIDEO_STATUSES = ['uploading', 'processing', 'available', 'failed', 'expired'] as const;
export type VideoStatus = (typeof VIDEO_STATUSES)[number];

/** The six normalized publish statuses of the spec; an unconfirmed outcome is `unconfirmedAt`, not a status. */
export const PUBLISH_STATUSES = [
  'submitted',
  'publish_processing',
  'publish_complete',
  'publish_failed',
  'publish_draft_inbox',
  'service_error',
] as const;
export type PublishStatus = (typeof PUBLISH_STATUSES)[number];

export const PRECHECK_STATUSES = ['submitted', 'processing', 'passed', 'failed', 'service_error'] as const;
export type PrecheckStatus = (typeof PRECHECK_STATUSES)[number];

export const PRIVACY_LEVELS = ['PUBLIC_TO_EVERYONE', 'MUTUAL_FOLLOW_FRIENDS', 'FOLLOWER_OF_CREATOR', 'SELF_ONLY'] as const;
export type PrivacyLevel = (typeof PRIVACY_LEVELS)[number];

/** The official 25 benchmark categories, the one list the type and the service's check derive from. */
export const BUSINESS_CATEGORIES = [
  'ART_AND_CRAFTS',
  'AUTOMOTIVE_AND_TRANSPORTATION',
  'BABY',
  'BEAUTY',
  'CLOTHING_AND_ACCESSORIES',
  'EDUCATION_AND_TRAINING',
  'ELECTRONICS',
  'FINANCE_AND_INVESTING',
  'FOOD_AND_BEVERAGE',
  'GAMING',
  'HEALTH_AND_WELLNESS',
  'HOME_FURNITURE_AND_APPLIANCES',
  'MACHINERY_AND_EQUIPMENT',
  'MEDIA_AND_ENTERTAINMENT',
  'PERSONAL_BLOG',
  'PETS',
  'PROFESSIONAL_SERVICES',
  'PUBLIC_ADMINISTRATION',
  'REAL_ESTATE',
  'RESTAURANTS_AND_BARS',
  'SHOPPING_AND_RETAIL',
  'SOFTWARE_AND_APPS',
  'SPORTS_FITNESS_AND_OUTDOORS',
  'TRAVEL_AND_TOURISM',
  'OTHERS',
] as const;

export type BusinessCategory = (typeof BUSINESS_CATEGORIES)[number];
