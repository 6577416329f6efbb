// The flags every command takes (`ferry --profile … mirror …`), as commander hands them over: a
// type of its own, so that what reads them (context, metrics, notify) need not import the program.
export interface GlobalOptions {
  profile?: string;
  config?: string;
  logLevel?: string;
  logFile?: string;
  verbose?: boolean;
  quiet?: boolean;
  metricsFile?: string;
  notify?: string;
  pushgateway?: string;
  listingLag?: string;
  allowHttp?: boolean;
}
