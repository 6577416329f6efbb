// The spec's complete enumerations (values outside them are answered with 400).
export const OCR_STRATEGIES = ['never', 'detect', 'always'] as const;
export const OCR_ENGINES = ['cloudDocumentIntelligence', 'engineA'] as const;
export const COORDINATE_EXTRACTION_STRATEGIES = ['never', 'engineB', 'cloudDocumentIntelligence', 'spreadsheet'] as const;
export const DOCUMENT_UPLOAD_SOURCES = ['local', 'docManagerOne', 'docManagerTwo', 'docManagerThree'] as const;
export const DOCUMENT_INDEXING_STATUSES = ['completed', 'failed', 'inProgress'] as const;
export const TABLE_COLUMN_TYPES = ['int', 'string'] as const;
export const ITEM_SORTING = [
  'dateAdded',
  'name',
  'description',
  'isDirectory',
  'playbookName',
  'projectName',
  'extension',
  'size',
  'pageCount',
  'isAdminACL',
  'documentsCount',
  'totalFileSizeBytes',
  'promptCount',
  'estimatedTokenCount',
  'latestMessageDate',
  'flowsCount',
  'orgWide',
  'flowCredits',
  'assistantsCount',
  'assistantCredits',
  'pages',
  'fileCreditsCost',
  'ocrCreditsCost',
  'layoutCreditsCost',
  'totalCredits',
  'loginsCount',
  'lastLoginDate',
  'playbookDescription',
  'ocrPageCount',
  'layoutPageCount',
  'userMessageCount',
  'assistantMessageCount',
  'totalMessageCount',
  'resourceOwner',
] as const;

/** What an upload gets when its form leaves a setting out. */
export const UPLOAD_DEFAULTS = {
  ocrStrategy: 'detect',
  ocrEngine: 'cloudDocumentIntelligence',
  coordinateExtractionStrategy: 'never',
  source: 'local',
} as const;
