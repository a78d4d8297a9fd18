declare module 'parse-prometheus-text-format' {
  export interface Sample {
    value?: string;
    labels?: Record<string, string>;
    buckets?: Record<string, string>;
    count?: string;
    sum?: string;
  }
  export interface Family {
    name: string;
    help: string;
    type: 'COUNTER' | 'GAUGE' | 'HISTOGRAM' | 'SUMMARY' | 'UNTYPED';
    metrics: Sample[];
  }
  export default function parse(text: string): Family[];
}
