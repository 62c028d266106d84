# Licensed under the Apache License, Version 2.0 (the "License"); you may
# not use this file except in compliance with the License. You may obtain
# a copy of the License at
#
#      http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS, WITHOUT
# WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied. See the
# License for the specific language governing permissions and limitations
# under the License.

"""Small statistics helpers matching CloudSim's MathUtil (Apache Commons Math
legacy percentile estimator, plain OLS for its never-weighted loess)."""


def percentile(values, p):
    """Commons Math ``Percentile`` (legacy): position p*(n+1)/100."""
    data = sorted(values)
    n = len(data)
    if n == 0:
        raise ValueError('percentile of no data')
    if n == 1:
        return data[0]
    pos = p * (n + 1) / 100.0
    if pos < 1:
        return data[0]
    if pos >= n:
        return data[-1]
    lower = int(pos)
    frac = pos - lower
    return data[lower - 1] + frac * (data[lower] - data[lower - 1])


def median(values):
    return percentile(values, 50)


def iqr(values):
    return percentile(values, 75) - percentile(values, 25)


def mad(values):
    centre = median(values)
    return median([abs(v - centre) for v in values])


def linear_fit(values):
    """Least-squares (intercept, slope) of values against x = 1..n."""
    n = len(values)
    if n < 2:
        raise ValueError('need two points for a line')
    mean_x = (n + 1) / 2.0
    mean_y = sum(values) / n
    sxx = sxy = 0.0
    for i, y in enumerate(values, 1):
        dx = i - mean_x
        sxx += dx * dx
        sxy += dx * (y - mean_y)
    slope = sxy / sxx
    return mean_y - slope * mean_x, slope


def count_nonzero_prefix(values_newest_first):
    count = 0
    for value in values_newest_first:
        if value == 0:
            break
        count += 1
    return count


def r_squared(y, columns):
    """R^2 of the OLS regression of y on the given columns plus intercept.

    Raises ValueError when the system is singular or under-determined, the
    cases where CloudSim's OLSMultipleLinearRegression throws.
    """
    n, k = len(y), len(columns) + 1
    if n <= k:
        raise ValueError('not enough samples')
    rows = [[1.0] + [col[i] for col in columns] for i in range(n)]
    xtx = [[sum(r[a] * r[b] for r in rows) for b in range(k)] for a in range(k)]
    xty = [sum(r[a] * yi for r, yi in zip(rows, y, strict=True)) for a in range(k)]
    beta = _solve(xtx, xty)
    mean_y = sum(y) / n
    ss_tot = sum((yi - mean_y) ** 2 for yi in y)
    if ss_tot == 0:
        raise ValueError('constant series')
    fitted = [sum(b * x for b, x in zip(beta, r, strict=True)) for r in rows]
    ss_res = sum((yi - fi) ** 2 for yi, fi in zip(y, fitted, strict=True))
    return 1.0 - ss_res / ss_tot


def _solve(matrix, rhs):
    size = len(rhs)
    aug = [row[:] + [v] for row, v in zip(matrix, rhs, strict=True)]
    for col in range(size):
        pivot = max(range(col, size), key=lambda r: abs(aug[r][col]))
        if abs(aug[pivot][col]) < 1e-12:
            raise ValueError('singular matrix')
        aug[col], aug[pivot] = aug[pivot], aug[col]
        for row in range(size):
            if row != col:
                factor = aug[row][col] / aug[col][col]
                if factor:
                    aug[row] = [a - factor * b for a, b in zip(aug[row], aug[col], strict=True)]
    return [aug[i][size] / aug[i][i] for i in range(size)]
