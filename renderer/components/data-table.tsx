import { Fragment, memo, type ReactNode } from 'react';

/** One column of a DataTable: its header and how each row fills its cell. */
export interface Column<T> {
  /** the header text (read by screen readers even when hidden) */
  header: string;
  /** a header only screen readers see: the column holds buttons or a picture, its heading would be noise */
  hiddenHeader?: boolean;
  /** the cell's content for a row */
  cell: (row: T) => ReactNode;
  /** the cell is the row's header (`<th scope="row">`), as in a table read row by row */
  rowHeader?: boolean;
  /** the cell's class name (`num`, `actions`, `wrap`, ...), fixed or by row */
  className?: string | ((row: T) => string | undefined);
  /** the cell's hover text, by row */
  title?: (row: T) => string | undefined;
  /**
   * `cell` returns the whole `<td>` itself (TimeAgoCell): a cell that follows
   * the clock re-renders alone, not with its table.
   */
  ownCell?: boolean;
}

export interface DataTableProps<T> {
  columns: readonly Column<T>[];
  rows: readonly T[];
  rowKey: (row: T) => string;
  className?: string;
  /** the table's accessible name when it has no visible caption */
  ariaLabel?: string;
  /** a caption, `captionHidden` for screen readers only */
  caption?: string;
  captionHidden?: boolean;
  /** shown instead of the table when there are no rows (null: nothing at all); without it an empty table is drawn */
  empty?: ReactNode;
}

/**
 * The console's list table: a header row of `scope="col"` cells, one row per
 * item. Rows are memoized on the item and the columns, so a list that grows
 * by one (a live audit entry) re-renders one row when the caller keeps its
 * columns stable (useMemo).
 */
export function DataTable<T>({
  columns,
  rows,
  rowKey,
  className,
  ariaLabel,
  caption,
  captionHidden,
  empty,
}: DataTableProps<T>) {
  if (rows.length === 0 && empty !== undefined) return <>{empty}</>;
  return (
    <table className={className} aria-label={ariaLabel}>
      {caption ? <caption className={captionHidden ? 'visually-hidden' : undefined}>{caption}</caption> : null}
      <thead>
        <tr>
          {columns.map((c, i) => (
            <th key={i} scope="col">
              {c.hiddenHeader ? <span className="visually-hidden">{c.header}</span> : c.header}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {rows.map((row) => (
          <Row key={rowKey(row)} row={row} columns={columns as readonly Column<unknown>[]} />
        ))}
      </tbody>
    </table>
  );
}

const Row = memo(function Row({ row, columns }: { row: unknown; columns: readonly Column<unknown>[] }) {
  return (
    <tr>
      {columns.map((c, i) => {
        if (c.ownCell) return <Fragment key={i}>{c.cell(row)}</Fragment>;
        const className = typeof c.className === 'function' ? c.className(row) : c.className;
        const title = c.title?.(row);
        return c.rowHeader ? (
          <th key={i} scope="row" className={className} title={title}>
            {c.cell(row)}
          </th>
        ) : (
          <td key={i} className={className} title={title}>
            {c.cell(row)}
          </td>
        );
      })}
    </tr>
  );
});
