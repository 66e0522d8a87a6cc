// @vitest-environment jsdom
import { cleanup, render, screen, within } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { DataTable, type Column } from '../../renderer/components/data-table.tsx';

afterEach(cleanup);

interface Row {
  id: string;
  name: string;
  n: number;
}
const rows: Row[] = [
  { id: 'a', name: 'alpha', n: 1 },
  { id: 'b', name: 'beta', n: 22 },
];
const columns: Column<Row>[] = [
  { header: 'Name', rowHeader: true, title: (r) => `id ${r.id}`, cell: (r) => r.name },
  { header: 'Count', className: 'num', cell: (r) => r.n },
  { header: 'Big', className: (r) => (r.n > 10 ? 'warning' : undefined), cell: (r) => (r.n > 10 ? 'yes' : 'no') },
  { header: 'Actions', hiddenHeader: true, cell: (r) => <button type="button">Open {r.name}</button> },
  { header: 'Own', ownCell: true, cell: (r) => <td data-own={r.id}>own</td> },
];

describe('DataTable', () => {
  it('draws column headers with scope=col, a hidden one for screen readers only, and one row per item', () => {
    render(<DataTable className="list" ariaLabel="Things" columns={columns} rows={rows} rowKey={(r) => r.id} />);
    const table = screen.getByRole('table', { name: 'Things' });
    expect(table.className).toBe('list');
    const headers = within(table).getAllByRole('columnheader');
    expect(headers.map((h) => h.textContent)).toEqual(['Name', 'Count', 'Big', 'Actions', 'Own']);
    expect(headers.every((h) => h.getAttribute('scope') === 'col')).toBe(true);
    expect(headers[3]!.querySelector('.visually-hidden')?.textContent).toBe('Actions');
    expect(within(table).getAllByRole('row')).toHaveLength(3);
  });

  it('gives each cell its row header, class, title and own cell as the column says', () => {
    const { container } = render(<DataTable columns={columns} rows={rows} rowKey={(r) => r.id} />);
    const beta = screen.getByRole('rowheader', { name: 'beta' });
    expect(beta.getAttribute('scope')).toBe('row');
    expect(beta.getAttribute('title')).toBe('id b');
    const cells = [...container.querySelectorAll('tbody tr:nth-child(2) td')];
    expect(cells.map((c) => c.className)).toEqual(['num', 'warning', '', '']);
    expect(container.querySelectorAll('td[data-own]')).toHaveLength(2);
    expect(screen.getByRole('button', { name: 'Open alpha' })).toBeTruthy();
  });

  it('shows the empty state instead of a table, nothing for null, and an empty table without one', () => {
    const { rerender, container } = render(
      <DataTable columns={columns} rows={[]} rowKey={(r) => r.id} empty={<p>None yet.</p>} />,
    );
    expect(screen.getByText('None yet.')).toBeTruthy();
    expect(screen.queryByRole('table')).toBeNull();
    rerender(<DataTable columns={columns} rows={[]} rowKey={(r) => r.id} empty={null} />);
    expect(container.innerHTML).toBe('');
    rerender(<DataTable columns={columns} rows={[]} rowKey={(r) => r.id} caption="Hidden" captionHidden />);
    expect(screen.getByRole('table', { name: 'Hidden' }).querySelector('caption')?.className).toBe('visually-hidden');
  });
});
