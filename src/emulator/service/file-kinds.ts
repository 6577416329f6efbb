// What the emulator knows about file extensions: the supported list, the FileType
// and the content type reported after processing.
export interface FileKind {
  fileType: 'text' | 'image' | 'video' | 'audio';
  contentType: string;
}

const text = (contentType: string): FileKind => ({ fileType: 'text', contentType });
const image = (contentType: string): FileKind => ({ fileType: 'image', contentType });

export const SUPPORTED_EXTENSIONS: Record<string, FileKind> = {
  pdf: text('application/pdf'),
  docx: text('application/vnd.openxmlformats-officedocument.wordprocessingml.document'),
  doc: text('application/msword'),
  xlsx: text('application/vnd.openxmlformats-officedocument.spreadsheetml.sheet'),
  xls: text('application/vnd.ms-excel'),
  pptx: text('application/vnd.openxmlformats-officedocument.presentationml.presentation'),
  ppt: text('application/vnd.ms-powerpoint'),
  odt: text('application/vnd.oasis.opendocument.text'),
  rtf: text('application/rtf'),
  txt: text('text/plain'),
  md: text('text/markdown'),
  csv: text('text/csv'),
  json: text('application/json'),
  xml: text('application/xml'),
  html: text('text/html'),
  htm: text('text/html'),
  eml: text('message/rfc822'),
  msg: text('application/vnd.ms-outlook'),
  png: image('image/png'),
  jpg: image('image/jpeg'),
  jpeg: image('image/jpeg'),
  gif: image('image/gif'),
  bmp: image('image/bmp'),
  tif: image('image/tiff'),
  tiff: image('image/tiff'),
  webp: image('image/webp'),
  mp4: { fileType: 'video', contentType: 'video/mp4' },
  mov: { fileType: 'video', contentType: 'video/quicktime' },
  webm: { fileType: 'video', contentType: 'video/webm' },
  mp3: { fileType: 'audio', contentType: 'audio/mpeg' },
  wav: { fileType: 'audio', contentType: 'audio/wav' },
  m4a: { fileType: 'audio', contentType: 'audio/mp4' },
  ogg: { fileType: 'audio', contentType: 'audio/ogg' },
};

/** Plain-text formats whose first bytes can be quoted in citations. */
export const QUOTABLE_EXTENSIONS: ReadonlySet<string> = new Set(['txt', 'md', 'csv', 'json', 'xml', 'html', 'htm']);

/** Lower-case extension without the dot, or null when the name has none. */
export function extensionOf(name: string): string | null {
  const dot = name.lastIndexOf('.');
  return dot > 0 && dot < name.length - 1 ? name.slice(dot + 1).toLowerCase() : null;
}
